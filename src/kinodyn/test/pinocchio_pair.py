"""kinodyn's and Pinocchio's (test-only reference) models of one URDF, side by side, for the tests that
compare the two.

Pinocchio takes mimic joints as independent joints and continuous joints as (cos, sin). ``G`` maps
kinodyn's v to Pinocchio's (a mimic joint copies its master times the multiplier), ``Pair.q`` maps q.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
import pytest

import kinodyn as kd

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

Case = tuple[Path, bool]
"""A URDF and whether its base floats."""
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
"""example-robot-data's robots (installed with Pinocchio)."""
PROJECT_URDFS = Path(__file__).resolve().parents[3] / "urdf"
CASES: list[Case] = [
    (ROBOTS / "panda_description" / "urdf" / "panda.urdf", False),
    (ROBOTS / "solo_description" / "robots" / "solo12.urdf", True),
    *[(path, floating) for path in sorted(PROJECT_URDFS.glob("*.urdf")) for floating in (False, True)],
]
"""The Panda (a mimic joint), Solo-12 (floating) and every URDF the project ships, fixed and floating."""


class Pair:
    """A kinodyn model, Pinocchio's model of the same URDF, and the maps between their spaces."""

    def __init__(self, path: Path, floating: bool) -> None:
        self.m = kd.Model.from_urdf(path, floating_base=floating)
        root = (pin.JointModelFreeFlyer(),) if floating else ()
        self.pm = pin.buildModelFromUrdf(str(path), *root)
        self.pd = self.pm.createData()
        base = 6 if floating else 0
        self.G = np.zeros((self.pm.nv, self.m.nv))
        self.G[:base, :base] = np.eye(base)
        self.coupled: list[tuple[int, int, int, float, float]] = []
        """(Pinocchio idx_q, Pinocchio nq, kinodyn q index, multiplier, offset) of each joint."""
        self.pin_joint_of_body = {1: self.pm.getJointId("root_joint")} if floating else {}
        names = list(self.m.joint_names) + list(self.m.mimic_joint_names)
        bodies = list(self.m.joint_body) + list(self.m.mimic_body)
        for name, body in zip(names, bodies, strict=True):
            jid = self.pm.getJointId(name)
            joint = self.pm.joints[jid]
            k, c = float(self.m.joint_multiplier[body]), float(self.m.joint_offset[body])
            self.G[joint.idx_v, self.m.idx_v[body]] = k
            self.coupled.append((joint.idx_q, joint.nq, int(self.m.idx_q[body]), k, c))
            self.pin_joint_of_body[body] = jid
        assert len(self.pin_joint_of_body) == self.pm.njoints - 1 == self.m.nbodies - 1

    def q(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio's q of kinodyn's ``q`` (the base quaternion normalised)."""
        qp = np.zeros(self.pm.nq)
        if self.m.floating_base:
            qp[:3] = q[:3]
            qp[3:7] = q[3:7] / np.linalg.norm(q[3:7])
        for iqp, nqp, iq, k, c in self.coupled:
            angle = k * q[iq] + c
            qp[iqp : iqp + nqp] = [np.cos(angle), np.sin(angle)] if nqp == 2 else angle
        return qp

    def forces(self, fext: np.ndarray) -> list[pin.Force]:
        """Pinocchio's external forces of kinodyn's (nbodies, 6) body-frame wrenches ``fext``."""
        out = [pin.Force.Zero() for _ in range(self.pm.njoints)]
        for body, jid in self.pin_joint_of_body.items():
            out[jid] = pin.Force(fext[body])
        return out


def case_id(case: Case) -> str:
    """``<urdf stem>-fixed`` or ``<urdf stem>-floating``."""
    return f"{case[0].stem}-{'floating' if case[1] else 'fixed'}"


def pair_fixture(cases: Sequence[Case]) -> Callable[[pytest.FixtureRequest], Pair]:
    """A module-scoped fixture ``pair``: one ``Pair`` for each of ``cases``."""

    @pytest.fixture(scope="module", params=cases, ids=case_id)
    def pair(request: pytest.FixtureRequest) -> Pair:
        return Pair(*request.param)

    return pair

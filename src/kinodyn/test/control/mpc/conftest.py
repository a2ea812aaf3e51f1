"""The project quadruped (urdf/quadruped.urdf) standing in its nominal stance, for the MPC tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from kinodyn.control.mpc import SingleRigidBody

import kinodyn as kd

URDF = Path(__file__).resolve().parents[5] / "urdf" / "quadruped.urdf"
FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
PAIRS = (("LF_FOOT", "RH_FOOT"), ("LH_FOOT", "RF_FOOT"))
"""The trot's diagonal pairs of ``FEET``."""
FOOT_RADIUS = 0.03  # the contact sphere's (urdf/README.md): the contact point is this far below the frame
BASE_HEIGHT = 0.5252  # the nominal stance's base height above flat ground (urdf/README.md)


@dataclass(frozen=True)
class Robot:
    """``model``, nominal ``q`` (base at its standing height), its SRB ``body``, the ``contacts`` (4 x 3,
    world) of the feet in ``FEET`` order and the standing SRB state ``x0``."""

    model: kd.Model
    q: np.ndarray
    body: SingleRigidBody
    contacts: np.ndarray
    x0: np.ndarray


@pytest.fixture(scope="session")
def robot() -> Robot:
    model = kd.Model.from_urdf(URDF, floating_base=True)
    q = model.neutral()
    q[2] = BASE_HEIGHT
    for leg, sign in (("LF", 1.0), ("RF", 1.0), ("LH", -1.0), ("RH", -1.0)):
        q[7 + model.joint_id(f"{leg}_HFE")] = 0.6 * sign
        q[7 + model.joint_id(f"{leg}_KFE")] = -1.2 * sign
    body = SingleRigidBody.from_model(model, q)
    contacts = np.array([model.frame_placement(q, foot)[:3, 3] for foot in FEET])
    contacts[:, 2] -= FOOT_RADIUS
    return Robot(model, q, body, contacts, body.state_from_floating_base(q, np.zeros(model.nv)))

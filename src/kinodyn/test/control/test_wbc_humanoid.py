"""A 12-DoF humanoid on flat feet (6-D surface contacts) standing in kinodyn.sim under the whole-body QP.

The robot is generated (``urdf/generate.py``: ``humanoid()``, about 39 kg, box feet touching the soft ground
with four spheres each). WBC at 500 Hz, weighted, simulator RK4 at 1 ms; standing tasks only (CoM, base
orientation, posture) at the default task weight 1, the soles' ``SurfaceContact`` with its defaults (contact
feedback and wrench regularisation, ``contacts.py``). Without those two the soles' internal wrench is set by
the QP's ridge alone and the solver reports a numerical error or puts the whole weight on one foot within the
first 0.1 s, and the feet rock on their edges (``test_without_the_surface_defaults_it_falls``). Simulated time
only.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.control.wbc import SurfaceContact, WholeBodyController
from kinodyn.control.wbc.tasks import BaseOrientationTask, ComTask, PostureTask

import kinodyn as kd
from kinodyn import sim

if TYPE_CHECKING:
    from types import ModuleType

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "examples"))  # the closed loop and gains of the quadruped's scenarios
import wbc_scenarios as scenarios  # noqa: E402  (from examples/, after the path)

SOLES = ("L_SOLE", "R_SOLE")


def generator() -> ModuleType:  # the urdf/generate.py module
    spec = importlib.util.spec_from_file_location("kinodyn_urdf_generate", ROOT / "urdf" / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = sys.modules.setdefault(spec.name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)  # (in sys.modules: its dataclasses look their module up)
    return module


def standing_humanoid(**sole_options: float) -> tuple[kd.Model, scenarios.ClosedLoop, np.ndarray]:
    """The humanoid on the ground under the WBC; ``sole_options``: passed to each ``SurfaceContact``."""
    generate = generator()
    robot = generate.humanoid()
    text = generate.render(robot)
    model = kd.Model.from_urdf(text, floating_base=True)
    contact = sim.ContactModel(sim.collision_spheres(text))
    assert len(contact.spheres) == 8  # four under each sole
    simulator = sim.Simulator(model, dt=1e-3, integrator="rk4", contact=contact)
    nominal = np.array([joint.nominal for joint in robot.controlled])
    q0 = model.neutral()
    q0[7:] = nominal
    q0[2] = -min(model.frame_placement(q0, sole)[2, 3] for sole in SOLES)  # soles on the ground, level
    simulator.reset(q0)
    soles = [SurfaceContact(sole, generate.HUMANOID_FOOT.size[0] / 2, generate.HUMANOID_FOOT.size[1] / 2,
                            mu=scenarios.FRICTION_MARGIN * contact.friction, **sole_options)
             for sole in SOLES]
    wbc = WholeBodyController(model, soles)
    kp, kd_ = scenarios.pd_gains(scenarios.BASE_HZ)
    com = ComTask(kp, kd_)
    com.set_reference(model.com(q0))
    base = BaseOrientationTask(model, kp, kd_)
    base.set_reference(np.eye(3))
    for task in (com, base, PostureTask(model, nominal, *scenarios.pd_gains(scenarios.POSTURE_HZ))):
        wbc.add_task(task)  # the default weight, 1
    return model, scenarios.ClosedLoop(simulator, wbc, 500.0), q0


def _stand(loop: scenarios.ClosedLoop, q0: np.ndarray, seconds: float) -> None:
    """Run the loop for ``seconds``; an AssertionError once the base is 5 cm below its start."""
    while loop.sim.t < seconds:
        loop.tick()
        assert loop.sim.q[2] > q0[2] - 0.05, f"fell at t = {loop.sim.t:.3f} s"


def test_humanoid_stands_10_s_and_takes_a_push() -> None:
    model, loop, q0 = standing_humanoid()
    simulator, wbc = loop.sim, loop.wbc
    total = float(wbc.update(q0, np.zeros(model.nv)).evaluation.total_mass)
    assert 35.0 < total < 45.0
    push = 0.1 * total * 9.81  # N, forwards, 0.2 s from t = 5 s
    reference = model.com(q0)
    max_com = after_push = 0.0
    lowest, pushed = q0[2], False
    while simulator.t < 10.0 - 1e-9:
        if not pushed and simulator.t >= 5.0 - 1e-9:
            simulator.apply_wrench("base_link", [push, 0.0, 0.0, 0.0, 0.0, 0.0], 0.2)
            pushed = True
        loop.tick()  # raises ControlError on any failed QP
        error = float(np.linalg.norm(model.com(simulator.q) - reference))
        max_com = max(max_com, error)
        if simulator.t > 7.0:
            after_push = max(after_push, error)
        lowest = min(lowest, simulator.q[2])
    print(f"\nmax CoM error {max_com:.4f} m, after the push (t > 7 s) {after_push:.4f} m, "
          f"base lowest {q0[2] - lowest:.4f} m below its start")
    assert simulator.t == pytest.approx(10.0)
    assert q0[2] - lowest < 0.05  # did not fall (nor sag)
    assert max_com < 0.08  # through the push
    assert after_push < 0.01  # back at its reference within 2 s of the push
    assert simulator.in_contact.all()  # both soles flat on the ground at the end


@pytest.mark.parametrize("options", [{"kp": 0.0, "kd": 0.0, "force_regularization": 0.0},
                                     {"kp": 0.0, "kd": 0.0}])
def test_without_the_surface_defaults_it_falls(options: dict) -> None:
    """Without contact feedback (with or without the wrench regularisation) the QP fails or the robot goes
    down within 3 s."""
    _, loop, q0 = standing_humanoid(**options)
    with pytest.raises((scenarios.ControlError, AssertionError)):
        _stand(loop, q0, 3.0)

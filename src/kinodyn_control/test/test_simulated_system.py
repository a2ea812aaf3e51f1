"""kinodyn_control/SimulatedSystem without ROS (ros_interface false), through the resource manager.

The quadruped of urdf/quadruped_sim.urdf stands under a joint PD law written to the effort commands; the
state interfaces are the simulator's (joints, applied effort, IMU); lockstep runs are deterministic; reset
and push requests act at the next write; bad parameters fail on_init with a message naming them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kinodyn_control.hardware.types import IMU_INTERFACES, LifecycleState
from kinodyn_control.manager import HardwareError
from kinodyn_control.testing import Harness

REPO = Path(__file__).resolve().parents[3]
JOINTS = [f"{leg}_{j}" for leg in ("LF", "LH", "RF", "RH") for j in ("HAA", "HFE", "KFE")]
STANDING = np.array([0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2])
KP, KD = 800.0, 10.0


def sim_urdf(**params: str) -> str:
    text = (REPO / "urdf" / "quadruped_sim.urdf").read_text()
    physics = str(REPO / "urdf" / "quadruped.urdf")
    text = text.replace("package://kinodyn_bringup/urdf/quadruped.urdf", physics)
    params = {"ros_interface": "false", "dt": "0.001", "lockstep": "false", **params}  # later <param> wins
    extra = "".join(f'      <param name="{k}">{v}</param>\n' for k, v in params.items())
    return text.replace("    </hardware>", extra + "    </hardware>", 1)


def run(h: Harness, cycles: int, period: float = 0.001) -> list[float]:
    heights = []
    component = h.resources.components["quadruped_system"]
    for _ in range(cycles):
        h.resources.read(0.0, period)
        q = np.array([h.state(f"{j}/position") for j in JOINTS])
        qd = np.array([h.state(f"{j}/velocity") for j in JOINTS])
        for j, tau in zip(JOINTS, KP * (STANDING - q) - KD * qd, strict=True):
            h.set_command(f"{j}/effort", tau)
        assert h.resources.write(0.0, period) == []
        heights.append(component.simulator.q[2])
    return heights


def test_quadruped_stands_and_states_are_the_simulators() -> None:
    h = Harness(sim_urdf())
    h.activate_hardware()
    sim = h.resources.components["quadruped_system"].simulator
    np.testing.assert_allclose(sim.contact_points[:, 2], 0.0, atol=1e-12)  # feet touch the ground
    assert sim.q[2] == pytest.approx(0.5252, abs=1e-5)  # urdf/README.md (c), rounded there
    heights = run(h, 2000)
    assert max(abs(z - 0.5252) for z in heights) < 0.01
    h.resources.read(0.0, 0.001)
    np.testing.assert_allclose([h.state(f"{j}/position") for j in JOINTS], sim.q[7:])
    np.testing.assert_allclose([h.state(f"{j}/effort") for j in JOINTS], sim.applied_torque[6:])
    imu = [h.state(f"imu_sensor/{i}") for i in IMU_INTERFACES]
    np.testing.assert_allclose(imu[3], 1.0, atol=1e-6)  # level base
    np.testing.assert_allclose(imu[7:], [0.0, 0.0, 9.81], atol=1e-3)  # specific force: +g up
    assert sim.t == pytest.approx(2.0)


def test_lockstep_is_deterministic_and_one_step_per_cycle() -> None:
    runs = []
    for _ in range(2):
        h = Harness(sim_urdf(lockstep="true"))
        h.activate_hardware()
        run(h, 300, period=0.0137)  # the period does not matter in lockstep
        sim = h.resources.components["quadruped_system"].simulator
        assert sim.t == pytest.approx(0.3)
        runs.append(sim.q.copy())
    np.testing.assert_array_equal(runs[0], runs[1])


def test_without_lockstep_a_late_cycle_runs_at_most_max_steps() -> None:
    h = Harness(sim_urdf(max_steps_per_cycle="7"))
    h.activate_hardware()
    sim = h.resources.components["quadruped_system"].simulator
    run(h, 1, period=0.003)
    assert sim.t == pytest.approx(0.003)  # period / dt steps
    run(h, 1, period=0.5)
    assert sim.t == pytest.approx(0.010)  # capped at 7 steps


def test_reset_and_push_act_at_the_next_write() -> None:
    h = Harness(sim_urdf(lockstep="true", contact="none"))
    h.activate_hardware()
    component = h.resources.components["quadruped_system"]
    sim = component.simulator
    start = sim.q.copy()
    run(h, 50)
    assert sim.q[2] < start[2] - 0.01  # no ground: it falls
    component.request_reset()
    run(h, 1)
    assert sim.t == pytest.approx(0.051)  # time runs on
    assert sim.q[2] > start[2] - 1e-4 and sim.q[2] == pytest.approx(start[2] - 0.5 * 9.81 * 1e-6, abs=1e-6)
    component.request_push("base_link", [100.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.01)
    run(h, 10)
    total = sim.model.mass.sum()
    v_com = sim.model.com_jacobian(sim.q) @ sim.v
    np.testing.assert_allclose(v_com[0], 100.0 * 0.01 / total, rtol=1e-9)
    with pytest.raises(KeyError):
        component.request_push("no_such_link", np.zeros(6), 0.1)
    with pytest.raises(ValueError):
        component.request_push("base_link", np.zeros(6), -1.0)


@pytest.mark.parametrize(("params", "message"), [
    ({"integrator": "euler"}, "integrator"),
    ({"contact": "sticky"}, "contact"),
    ({"dt": "fast"}, "dt"),
    ({"bogus": "1"}, "unknown params"),
])
def test_bad_parameters_fail_on_init(params: dict[str, str], message: str) -> None:
    with pytest.raises(HardwareError, match=message):
        Harness(sim_urdf(**params))


def test_component_lifecycle_reaches_active() -> None:
    h = Harness(sim_urdf())
    h.activate_hardware()
    assert h.resources.components["quadruped_system"].lifecycle_state is LifecycleState.ACTIVE

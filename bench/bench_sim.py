"""Simulator benchmark: the quadruped standing on four feet at 1 kHz on both physics backends, and MuJoCo's
bare mj_step.

Both backends load urdf/quadruped.urdf (``kinodyn.sim.create_backend``; the mujoco backend through MuJoCo's
URDF importer, a free joint on the base, contacts only between the foot spheres and the ground plane), start
in the nominal standing pose and run the same joint PD law. Prints, per integrator (RK4, semi-implicit Euler):

- the per-step time of each backend's ``step`` with the PD law computed in Python every step, as a user's
  loop runs it (kinodyn: ``Simulator.step``; mujoco: ``MujocoSimulator.step``, i.e. mj_step plus the state
  conversion, the pushes and the IMU bookkeeping of the protocol), and the simulated seconds per wall second;
- the compiled kinodyn step kernel alone, and ``mj_step`` alone on the mujoco backend's own model and data
  (the PD law written straight into ``ctrl``), and the ratios to ``mj_step`` (kinodyn target: at most 10).

The table goes to the ``bench_sim`` section of bench/RESULTS.md (bench/results.py).

    python bench/bench_sim.py [--no-record]

Times are medians over interleaved rounds (the machine may be loaded by other processes: compare the
ratios of one run).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING

import mujoco
import numpy as np
from kinodyn.sim import kernels
from kinodyn.sim.mujoco_backend import MujocoSimulator
from results import add_record_flag, markdown_header, markdown_row, record, shown

import kinodyn as kd
from kinodyn import sim

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "urdf" / "quadruped.urdf"
STANDING = np.array([0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2])
HEIGHT = 0.5252
KP, KD = 800.0, 10.0
DT = 1e-3
SETTLE_STEPS = 1000


def standing(backend: str, integrator: str) -> sim.PhysicsBackend:
    """The quadruped on ``backend``, settled on its four feet under the PD law."""
    m = kd.Model.from_urdf(URDF, floating_base=True)
    s = sim.create_backend(backend, URDF, m, dt=DT, integrator=integrator,
                           contact=sim.ContactModel(sim.collision_spheres(URDF)))
    q = m.neutral()
    q[2] = HEIGHT
    q[7:] = STANDING
    s.reset(q)
    for _ in range(SETTLE_STEPS):
        s.step(KP * (STANDING - s.q[7:]) - KD * s.v[6:])
    assert s.in_contact.all(), f"{backend}: the quadruped must stand on four feet"
    return s


def bare_mj_step(s: MujocoSimulator) -> Callable[[], None]:
    """``mj_step`` on the backend's model and data, the PD law on MuJoCo's qpos / qvel into ``ctrl``."""
    model, data = s.mj, s.data
    qadr = [model.joint(name).qposadr[0] for name in s.model.joint_names]
    vadr = [model.joint(name).dofadr[0] for name in s.model.joint_names]
    act = [model.actuator(name).id for name in s.model.joint_names]

    def control_and_step() -> None:
        data.ctrl[act] = KP * (STANDING - data.qpos[qadr]) - KD * data.qvel[vadr]
        mujoco.mj_step(model, data)

    return control_and_step


def median_step_us(fn: Callable[[], object], steps: int = 500, rounds: int = 15) -> list[float]:
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()
        out.append((time.perf_counter() - t0) / steps * 1e6)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_record_flag(parser)
    args = parser.parse_args()
    lines = [f"quadruped (urdf/quadruped.urdf, 12 joints, 4 foot contacts), dt = {DT * 1e3:g} ms, joint PD.",
             "",
             markdown_header("integrator", "kinodyn step [us]", "kernel only [us]", "mujoco step [us]",
                             "mj_step [us]", "kinodyn / mj_step", "kernel / mj_step", "mujoco / mj_step",
                             "sim s / wall s, kinodyn / mujoco")]
    print("\n".join(lines), flush=True)
    for integrator in sim.INTEGRATORS:
        s = standing("kinodyn", integrator)
        assert isinstance(s, sim.Simulator)
        theirs_backend, bare = standing("mujoco", integrator), standing("mujoco", integrator)
        assert isinstance(theirs_backend, MujocoSimulator)
        assert isinstance(bare, MujocoSimulator)
        mj_step = bare_mj_step(bare)  # its own model and data: the backend's cached state stays its own
        ki, kf = s.model.kernel_data
        # the simulator's own arrays, so the kernel alone steps the same contact problem as the simulator
        body, offset, radius = s._spheres  # noqa: SLF001
        tau = np.zeros(s.model.nv)
        tau[6:] = KP * (STANDING - s.q[7:]) - KD * s.v[6:]
        q_out, v_out = np.empty(s.model.nq), np.empty(s.model.nv)
        forces, points = np.empty((4, 3)), np.empty((4, 3))
        anchors = s._anchors.copy()  # noqa: SLF001

        def kernel_only(  # noqa: PLR0913, PLR0917  (binds this iteration's arrays as defaults)
            s: sim.Simulator = s, tau: np.ndarray = tau, anchors: np.ndarray = anchors,
            q_out: np.ndarray = q_out, v_out: np.ndarray = v_out, forces: np.ndarray = forces,
            points: np.ndarray = points, ki: np.ndarray = ki, kf: np.ndarray = kf, body: np.ndarray = body,
            offset: np.ndarray = offset, radius: np.ndarray = radius,
        ) -> None:
            kernels.step(ki, kf, s.q, s.v, tau, DT, s._rk4, True, s._damping, s._friction,  # noqa: SLF001
                         s._implicit_joints, s._params, anchors, body, offset, radius,  # noqa: SLF001
                         *s._push_arrays, False, s._data.work, q_out, v_out, forces, points)  # noqa: SLF001

        def user_step(s: sim.PhysicsBackend) -> Callable[[], None]:
            return lambda: s.step(KP * (STANDING - s.q[7:]) - KD * s.v[6:])

        ours, kernel, backend, theirs = [], [], [], []
        for _ in range(5):  # interleaved rounds
            ours += median_step_us(user_step(s), rounds=3)
            kernel += median_step_us(kernel_only, rounds=3)
            backend += median_step_us(user_step(theirs_backend), rounds=3)
            theirs += median_step_us(mj_step, rounds=3)
        assert s.in_contact.all()
        assert theirs_backend.in_contact.all()
        o, k, b, t = (statistics.median(x) for x in (ours, kernel, backend, theirs))
        shown(lines, markdown_row(integrator, f"{o:.1f}", f"{k:.1f}", f"{b:.1f}", f"{t:.1f}", f"{o / t:.2f}",
                                  f"{k / t:.2f}", f"{b / t:.2f}", f"{1e3 / o:.1f} / {1e3 / b:.1f}"))
    lines += ["", "kinodyn step / mujoco step: the backend's step with the PD law in Python (the user's "
              "loop); mj_step includes the same PD law. Kernel only: kinodyn.sim.kernels.step (integrator, "
              "contact, ABA), no Python around it."]
    print(lines[-1])
    record("bench_sim", "\n".join(lines), no_record=args.no_record)


if __name__ == "__main__":
    main()

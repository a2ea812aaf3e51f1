"""arm7 draws a figure-8 with operational space control in kinodyn's simulator (no ROS).

The end effector (``ee_link``) follows ``kinodyn.control.trajectories.Figure8`` (amplitude 0.1 m, 0.5 Hz, in
the vertical y-z plane through its ready-pose position) and holds its ready-pose orientation. Each control
tick (1 kHz) evaluates the robot once and applies Robot Dynamics lecture notes (ETH), (3.89)-(3.90):
``tau = J^T (Lambda wdot* + mu + p) + (I - J^T Jbar^T) tau_0`` with
``wdot* = a* + kp e + kd (w* - J v)`` and a joint PD towards the ready pose as the null-space posture
``tau_0``. The simulator integrates with RK4 under the URDF's joint damping and (regularised Coulomb)
friction; the controller adds the same joint friction torques as a feed-forward, or not
(``--no-friction-compensation``), to show what the unmodelled friction costs. Prints the RMS and largest
position and orientation errors.

    python examples/arm_figure8_osc.py [--seconds 10] [--no-friction-compensation]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from kinodyn.control.joint_space import gains_from_frequency, pd
from kinodyn.control.task_space import operational_space_control, pose_error, task_acceleration
from kinodyn.control.trajectories import Figure8, rms
from kinodyn.evaluation import Evaluator
from kinodyn.model import Model
from kinodyn.sim import Simulator

URDF = Path(__file__).resolve().parents[1] / "urdf" / "arm7.urdf"
FRAME = "ee_link"
READY = np.array([0.0, -np.pi / 4, 0.0, -3 * np.pi / 4, 0.0, np.pi / 2, np.pi / 4])  # urdf/README.md
CONTROL_DT = 1e-3
TASK_KP, TASK_KD = gains_from_frequency(natural_frequency=30.0, damping_ratio=1.0)
POSTURE_KP, POSTURE_KD = 20.0, 4.0
FRICTION_VELOCITY = 0.1  # rad/s, kd.sim.Simulator's default joint_friction_velocity


@dataclass(frozen=True)
class Figure8Result:
    position_rms: float  # m
    orientation_rms: float  # rad
    position_max: float  # m
    orientation_max: float  # rad
    torque_max: float  # N m, largest |tau| commanded


def joint_friction(model: Model, v: np.ndarray) -> np.ndarray:
    """The simulator's joint friction torque at ``v`` (kd.sim.Simulator doc, default regularisation)."""
    return model.damping * v + model.friction * v / np.sqrt(v * v + FRICTION_VELOCITY**2)


def run(seconds: float = 10.0, compensate_friction: bool = True) -> Figure8Result:
    """Simulate ``seconds`` of tracking from the ready pose, started on the reference's velocity."""
    model = Model.from_urdf(URDF)
    evaluator = Evaluator(model, [FRAME])
    start = model.frame_placement(READY, FRAME)
    figure8 = Figure8(center=start[:3, 3], amplitude=0.1, frequency=0.5, u=(0, 1, 0), w=(0, 0, 1))
    J0 = model.frame_jacobian(READY, FRAME, "local_world_aligned")
    v0 = np.linalg.pinv(J0) @ np.concatenate([figure8.sample(0.0).velocity, np.zeros(3)])
    sim = Simulator(model, dt=CONTROL_DT, integrator="rk4")
    sim.reset(READY, v0)
    target = start.copy()
    errors, torque_max = [], 0.0
    for _ in range(round(seconds / CONTROL_DT)):
        ref = figure8.sample(sim.t)
        target[:3, 3] = ref.position
        ev = evaluator.evaluate(sim.q, sim.v)
        errors.append(pose_error(target, ev.placement(FRAME)))
        wdot = task_acceleration(ev, FRAME, target, TASK_KP, TASK_KD,
                                 twist_ref=np.concatenate([ref.velocity, np.zeros(3)]),
                                 acceleration_ref=np.concatenate([ref.acceleration, np.zeros(3)]))
        tau = operational_space_control(ev, FRAME, wdot, tau0=pd(ev, READY, POSTURE_KP, POSTURE_KD))
        if compensate_friction:
            tau = tau + joint_friction(model, sim.v)
        torque_max = max(torque_max, float(np.abs(tau).max()))
        sim.step(tau)
    e = np.array(errors)
    return Figure8Result(rms(e[:, :3]), rms(e[:, 3:]), float(np.linalg.norm(e[:, :3], axis=1).max()),
                         float(np.linalg.norm(e[:, 3:], axis=1).max()), torque_max)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="simulated time [s] (default 10)")
    parser.add_argument("--no-friction-compensation", action="store_true",
                        help="leave the joints' damping and friction to the feedback")
    args = parser.parse_args()
    r = run(args.seconds, compensate_friction=not args.no_friction_compensation)
    friction = "without" if args.no_friction_compensation else "with"
    print(f"arm7 figure-8 (0.1 m, 0.5 Hz), operational space control at {1 / CONTROL_DT:.0f} Hz, "
          f"{friction} joint friction compensation, {args.seconds:g} s:")
    print(f"  position error     RMS {r.position_rms * 1e3:.3f} mm,   max {r.position_max * 1e3:.3f} mm")
    print(f"  orientation error  RMS {np.degrees(r.orientation_rms):.4f} deg, "
          f"max {np.degrees(r.orientation_max):.4f} deg")
    print(f"  largest commanded torque {r.torque_max:.2f} N m")


if __name__ == "__main__":
    main()

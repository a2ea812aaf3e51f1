"""Acceptance on quadrupeds nobody tuned for: generated variants (urdf/generate.py ``QuadrupedVariant``: mass,
leg length, knee directions, trunk CoM offset) and public models (``PUBLIC``: urdf/public), each given to the
``LocomotionController`` only as its URDF, its feet and its nominal stance, with default
``LocomotionParameters``, on kinodyn.sim and on MuJoCo (``kinodyn.sim.create_backend``). No ROS.

Scenarios: stand, trot in place, 0.5 m/s forward, 0.2 m/s sideways, 0.6 rad/s turn, 30 s of random
commands (each component uniform within those three speeds, a new command every 2-4 s), a lateral push of
0.5 x weight for 0.2 s while trotting (at four phases of the gait cycle) and one of 0.25 x weight while
standing. A row passes with no fall (base below 60 % of its nominal height or a non-foot frame on the
ground), no failed or fallback QP solve, no divergence of the simulator (named in the row, and the matrix goes
on), and (in the velocity rows) a heading-frame velocity RMSE
<= 0.05 m/s and <= 0.05 rad/s after the transient (in the random run: each command's first second left
out). Ticks answered relaxed (the hard level infeasible, solved with soft limits: docs/wbc.md) are counted
and shown, and do not fail a row. A velocity row also shows where its error is: the mean error (vx, vy, wz:
a steady offset) and the root mean square of the rest (what oscillates about it, within the gait cycle),
``RMSE^2 = mean^2 + oscillation^2`` per component.

With ``--mpc`` the centroidal MPC (``MpcLocomotion``, its defaults) is plugged into each robot's controller,
and a row also fails on a failed or late MPC solve.

Usage: ``python examples/acceptance_matrix.py [--engines kinodyn mujoco] [--robots NAME ...]
[--scenarios ...] [--mpc]``; prints one table row per (robot, engine, scenario). Any other legged robot:
``--urdf FILE --feet FRAME ... --stance RAD ... [--balance-inertia]`` (its movable joints' nominal angles in
the model's order; ``--leg-stance RAD ...``: one leg's, the same for every leg; ``--srdf FILE [--state
NAME] [--joint NAME=RAD ...]``: the angles of a state of its SRDF, ``standing`` by default,
``srdf_states``, each ``--joint`` setting one it lacks or overriding one) runs it alone, named after the
file.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import locomotion_scenarios as scenarios
import numpy as np
import srdf_states
from kinodyn.control.locomotion.mpc_locomotion import MpcLocomotion
from wbc_scenarios import ControlError

import kinodyn as kd
from kinodyn import sim

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "urdf"))
from typing import TYPE_CHECKING

import generate

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

G = 9.81
LINEAR_BOUND, YAW_BOUND = 0.05, 0.05  # m/s, rad/s: RMSE after the transient
FALL_HEIGHT_RATIO = 0.6

# light/short to heavy/long; knees: the generator's default (front backward, hind forward), all forward, all
# backward, and front forward / hind backward; trunk CoM offsets up to 3 cm
VARIANTS = (
    generate.QuadrupedVariant("light_short", 2.0, 0.15),
    generate.QuadrupedVariant("small_fwd_knees", 6.0, 0.25, "forward", "forward", (0.03, 0.0)),
    generate.QuadrupedVariant("mid_mixed", 20.0, 0.4, "forward", "backward", (-0.03, 0.02)),
    generate.QuadrupedVariant("dense_short", 40.0, 0.3, "backward", "backward", (0.0, -0.03)),
    generate.QuadrupedVariant("heavy_long", 80.0, 0.6, "backward", "forward", (0.02, -0.02)),
)


@dataclass(frozen=True)
class PublicRobot:
    """A public model nobody here tuned for (urdf/public, urdf/README.md): its file, feet, nominal stance."""

    name: str
    urdf: Path
    feet: tuple[str, ...]
    stance: tuple[float, ...]  # rad, the movable joints in the model's order
    balance_inertia: bool = False  # the file has non-physical inertias: simulated repaired (create_backend)
    foot_radius: float = 0.0  # m, > 0: a contact sphere centred at each foot without one in the file


PUBLIC_URDF = Path(__file__).resolve().parents[1] / "urdf" / "public"
PUBLIC = (
    # Unitree A1, 13.7 kg: Unitree's stand() pose (hip 0, thigh 0.67, calf -1.3 rad), legs FL, FR, RL, RR
    PublicRobot("unitree_a1", PUBLIC_URDF / "a1.urdf", ("FL_foot", "FR_foot", "RL_foot", "RR_foot"),
                (0.0, 0.67, -1.3) * 4),
    # ANYbotics' ANYmal C, 52.1 kg: legged_gym's default joint angles, legs LF, RF, LH, RH; its camera and
    # hatch links' inertias violate the triangle inequality
    PublicRobot("anymal_c", PUBLIC_URDF / "anymal_c.urdf", ("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"),
                (0.0, 0.4, -0.8) * 2 + (0.0, -0.4, 0.8) * 2, balance_inertia=True),
)
VARIANT: dict[str, generate.QuadrupedVariant | PublicRobot] = {v.name: v for v in (*VARIANTS, *PUBLIC)}


@dataclass(frozen=True)
class Row:
    robot: str
    engine: str
    scenario: str
    fell: bool
    infeasible: str  # "" or the failed solve's message
    fallbacks: int  # ticks whose answer was not "solved" (a fallback solver's)
    rmse_linear: float | None  # m/s (velocity rows)
    rmse_yaw_rate: float | None  # rad/s
    min_height_ratio: float
    relaxed: int = 0  # ticks answered relaxed (the hard level infeasible): shown, allowed
    mean_error: tuple[float, float, float] | None = None  # vx, vy [m/s], wz [rad/s] after the transient
    oscillation: tuple[float, float, float] | None = None  # RMS of the error about its mean, same units
    mpc_failures: int = 0  # failed MPC solves (with the MPC plugged in)
    mpc_late: int = 0  # MPC solves finished too late (plans expired unreplaced)
    diverged: str = ""  # the simulator's message when it diverged (the row stops there)

    @property
    def passed(self) -> bool:
        if self.rmse_linear is None or self.rmse_yaw_rate is None:
            tracked = True  # a push row: no velocity bound
        else:
            tracked = self.rmse_linear <= LINEAR_BOUND and self.rmse_yaw_rate <= YAW_BOUND
        planned = self.mpc_failures == 0 and self.mpc_late == 0
        solved = not self.infeasible and not self.diverged and self.fallbacks == 0
        return not self.fell and solved and tracked and planned

    def figure(self) -> str:
        parts = [] if self.rmse_linear is None else [
            f"rmse {self.rmse_linear:.3f} m/s {self.rmse_yaw_rate:.3f} rad/s"]
        if self.mean_error is not None and self.oscillation is not None:
            mean = ", ".join(f"{x:+.3f}" for x in self.mean_error)
            spread = ", ".join(f"{x:.3f}" for x in self.oscillation)
            parts.append(f"mean error ({mean}), oscillation ({spread})")
        if not math.isnan(self.min_height_ratio):
            parts.append(f"min height {100 * self.min_height_ratio:.0f} %")
        if self.fell:
            parts.append("FELL")
        if self.infeasible:
            parts.append(f"QP failed: {self.infeasible}")
        if self.diverged:
            parts.append(self.diverged)
        if self.fallbacks:
            parts.append(f"{self.fallbacks} fallback solves")
        if self.relaxed:
            parts.append(f"{self.relaxed} relaxed ticks")
        if self.mpc_failures or self.mpc_late:
            parts.append(f"MPC: {self.mpc_failures} failed, {self.mpc_late} late")
        return ", ".join(parts)


def build(variant: generate.QuadrupedVariant | PublicRobot, engine: str, directory: Path,
          scaled_ground: bool = True) -> scenarios.Legged:
    """The variant's URDF written to ``directory`` (a public robot's file as it is), standing in ``engine``
    under the default controller, on a ground scaled to its legs (``scaled_ground`` False: the quadruped's,
    ``Legged.build``)."""
    if isinstance(variant, PublicRobot):
        spheres = sim.collision_spheres(variant.urdf)
        if variant.foot_radius > 0.0:
            spheres += tuple(sim.ContactSphere(foot, (0.0, 0.0, 0.0), variant.foot_radius)
                             for foot in scenarios.feet_without_spheres(variant.feet, spheres))
        return scenarios.Legged.build(variant.urdf, variant.feet, np.array(variant.stance), spheres,
                                      backend=engine, balance_inertia=variant.balance_inertia,
                                      scaled_ground=scaled_ground)
    robot = generate.quadruped_variant(variant)
    urdf = directory / f"{variant.name}.urdf"
    urdf.write_text(generate.render(robot))
    stance = np.array([c.nominal for c in robot.controlled])
    return scenarios.Legged.build(urdf, generate.QUADRUPED_FEET, stance, sim.collision_spheres(urdf),
                                  backend=engine, scaled_ground=scaled_ground)


def _fell(robot: scenarios.Legged, trace: scenarios.Trace) -> tuple[bool, float]:
    ratio = min(trace.height) / robot.nominal_height if trace.height else 1.0
    return ratio < FALL_HEIGHT_RATIO or (bool(trace.lowest_body) and min(trace.lowest_body) <= 0.0), ratio


# Row's fields after the scenario (a velocity row's with its mean error and oscillation)
RowFigures = tuple[bool, str, int, float | None, float | None, float, int] | \
    tuple[bool, str, int, float, float, float, int, tuple[float, float, float], tuple[float, float, float]]


def velocity_row(robot: scenarios.Legged, mode: str, command: np.ndarray, duration: float,
                 settle: float) -> RowFigures:
    """Run ``mode`` with ``command`` for ``duration`` s; fall, failure, fallbacks, RMSE, mean error and
    oscillation (module doc) after ``settle`` s."""
    trace, failure = scenarios.Trace(), ""
    try:
        scenarios.run(robot, robot.sim.t + duration, lambda _t: command, trace, mode=mode)
    except ControlError as exc:
        failure = str(exc)
    fell, ratio = _fell(robot, trace)
    a = trace.arrays()
    late = a["t"] >= a["t"][0] + settle - 1e-9 if a["t"].size else a["t"].astype(bool)
    if failure or not late.any():
        return fell, failure or "no samples", len(trace.notes), None, None, ratio, len(trace.relaxed)
    error = a["velocity"][late] - command
    mean = error.mean(axis=0)
    vx, vy, wz = mean.tolist()
    sx, sy, sz = np.sqrt(np.mean((error - mean) ** 2, axis=0)).tolist()
    return (fell, "", len(trace.notes), float(np.sqrt(np.mean(np.sum(error[:, :2] ** 2, axis=1)))),
            float(np.sqrt(np.mean(error[:, 2] ** 2))), ratio, len(trace.relaxed), (vx, vy, wz), (sx, sy, sz))


def push_row(robot: scenarios.Legged, mode: str, weight_fraction: float,
             phase: float = 0.0) -> RowFigures:
    """A lateral push of ``weight_fraction`` x weight for 0.2 s after ``1 s + phase x period`` of ``mode``
    (``phase``: of the gait cycle, the controller's ``period``), then 2 s more."""
    mass = float(robot.model.mass.sum())
    try:
        f = scenarios.push(robot, force=weight_fraction * mass * G, duration=0.2,
                           before=1.0 + phase * robot.controller.period, after=2.0, mode=mode)
    except ControlError as exc:  # push() keeps no trace of a failed run: its height is not known
        return False, str(exc), 0, None, None, float("nan"), 0
    fell = f.min_height_ratio < FALL_HEIGHT_RATIO or f.lowest_body <= 0.0
    return fell, "", len(f.notes), None, None, f.min_height_ratio, len(f.relaxed)


def random_row(robot: scenarios.Legged, seconds: float, limits: tuple[float, float, float]) -> RowFigures:
    """``locomotion_scenarios.random_run`` for ``seconds`` s within ``limits`` (vx, vy, wz), seed 0."""
    r = scenarios.random_run(robot, seconds, seed=0, limits=limits)
    if r.failure:
        return False, r.failure, r.fallbacks, None, None, r.min_height_ratio, r.relaxed
    return (r.fell_at is not None, "", r.fallbacks, r.rmse_linear, r.rmse_yaw_rate, r.min_height_ratio,
            r.relaxed)


def _velocity(mode: str, command: tuple[float, float, float], duration: float = 3.0,
              settle: float = 1.5) -> Callable[[scenarios.Legged], tuple]:
    return lambda robot: velocity_row(robot, mode, np.array(command), duration, settle)


def _push(mode: str, weight_fraction: float, phase: float = 0.0) -> Callable[[scenarios.Legged], tuple]:
    return lambda robot: push_row(robot, mode, weight_fraction, phase)


TROT_PUSH_PHASES = (0.0, 0.25, 0.5, 0.75)  # of the gait cycle, after 1 s of trotting
SPEEDS = (0.5, 0.2, 0.6)  # m/s forward, m/s sideways, rad/s: the velocity rows' and the random run's limits
RANDOM_SECONDS = 30.0
SCENARIOS: dict[str, Callable[[scenarios.Legged], tuple]] = {
    "stand": _velocity("stand", (0.0, 0.0, 0.0), 2.0, 1.0),
    "trot in place": _velocity("trot", (0.0, 0.0, 0.0)),
    "forward 0.5 m/s": _velocity("trot", (SPEEDS[0], 0.0, 0.0)),
    "sideways 0.2 m/s": _velocity("trot", (0.0, SPEEDS[1], 0.0)),
    "turn 0.6 rad/s": _velocity("trot", (0.0, 0.0, SPEEDS[2])),
    "random 30 s": lambda robot: random_row(robot, RANDOM_SECONDS, SPEEDS),
    **{f"trot push 0.5 mg @{phase:g}T": _push("trot", 0.5, phase) for phase in TROT_PUSH_PHASES},
    "stand push 0.25 mg": _push("stand", 0.25),
}


def evaluate(variant: generate.QuadrupedVariant | PublicRobot, engine: str, scenario: str,
             mpc: bool = False, overrides: Mapping[str, object] | None = None) -> Row:
    """One row of the matrix, on a freshly built robot (``mpc``: with ``MpcLocomotion`` plugged in;
    ``overrides``: ``LocomotionParameters`` fields set on its controller, instead of the defaults)."""
    with tempfile.TemporaryDirectory() as directory:
        robot = build(variant, engine, Path(directory))
    if overrides:
        robot.controller.set_parameters(replace(robot.controller.params, **overrides))
    planner = MpcLocomotion(robot.controller) if mpc else None
    try:
        row = Row(variant.name, engine, scenario, *SCENARIOS[scenario](robot))
    except FloatingPointError as exc:  # the simulator's divergence, named: a failed row, the matrix goes on
        row = Row(variant.name, engine, scenario, False, "", 0, None, None, math.nan, diverged=str(exc))
    if planner is None:
        return row
    return replace(row, mpc_failures=planner.status.failures, mpc_late=planner.status.late)


def _srdf_stance(parser: argparse.ArgumentParser, srdf: Path, state: str, model: kd.Model,
                 joints: dict[str, float]) -> tuple[float, ...]:
    """Every movable joint's angle from the SRDF's ``state`` and ``joints`` (``--joint``: they override it),
    in the model's order; the parser's error naming the joints neither gives. The joints the state names that
    the model does not move are left out, in one line (``srdf_states.for_model``)."""
    try:
        angles = srdf_states.for_model(srdf, state, model.joint_names) | joints
    except ValueError as exc:
        parser.error(str(exc))
    missing = [name for name in model.joint_names if name not in angles]
    if missing:
        parser.error(f"--srdf {srdf} state {state!r} does not match the URDF's movable joints: missing: "
                     f"{', '.join(missing)} (give them with --joint NAME=RAD)")
    return tuple(angles[name] for name in model.joint_names)


def _robot_from_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> PublicRobot:
    """``--urdf``, ``--feet`` and ``--stance`` (or ``--leg-stance``, repeated for every foot, or an SRDF's
    ``--state``) as a ``PublicRobot``; the parser's error (exit 2) naming what is missing."""
    if not args.urdf.is_file():
        parser.error(f"--urdf {args.urdf}: no such file")
    if not args.feet or not (args.stance or args.leg_stance or args.srdf):
        parser.error("--urdf needs --feet (its foot frames) and --stance, --leg-stance or --srdf (nominal "
                     "angles)")
    try:
        model = kd.Model.from_urdf(args.urdf, floating_base=True)
    except ValueError as exc:
        parser.error(f"--urdf {args.urdf}: {exc}")
    stance = tuple(args.stance) or tuple(args.leg_stance) * len(args.feet)
    if args.joint and not args.srdf:
        parser.error("--joint goes with --srdf (it sets or overrides a joint of the SRDF's state)")
    unknown = [name for name, _ in args.joint if name not in model.joint_names]
    if unknown:
        parser.error(f"--joint {', '.join(unknown)}: not movable joints of {args.urdf.name}")
    if args.srdf:
        stance = _srdf_stance(parser, args.srdf, args.state, model, dict(args.joint))
    for foot in args.feet:
        try:
            model.frame_id(foot)
        except KeyError as exc:
            parser.error(f"--feet {foot}: {exc.args[0]}")
    joints = model.nq - 7
    if len(stance) != joints:
        parser.error(f"{args.urdf.name} has {joints} movable joints; --stance gave {len(stance)} angles "
                     f"(--leg-stance: one leg's, repeated for each of the {len(args.feet)} feet)")
    lower, upper = model.lower_limit[7:], model.upper_limit[7:]
    outside = [(name, angle, low, high) for name, angle, low, high in
               zip(model.joint_names, stance, lower, upper, strict=True) if not low <= angle <= high]
    if outside:
        parser.error(f"{args.urdf.name}: the stance is outside the URDF's joint limits: "
                     + "; ".join(f"{name} {angle:g} not in [{low:g}, {high:g}]"
                                 for name, angle, low, high in outside))
    if not (math.isfinite(args.foot_radius) and args.foot_radius >= 0.0):
        parser.error(f"--foot-radius must be a finite number >= 0 (m), got {args.foot_radius}")
    bare = scenarios.feet_without_spheres(tuple(args.feet), sim.collision_spheres(args.urdf))
    if bare and args.foot_radius == 0.0:
        parser.error(f"{args.urdf.name}: feet {', '.join(bare)} have no collision sphere (the simulators' "
                     f"contact geometry; meshes are not): give them one with --foot-radius (m)")
    return PublicRobot(args.urdf.stem, args.urdf.resolve(), tuple(args.feet), stance, args.balance_inertia,
                       args.foot_radius)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engines", nargs="+", default=["kinodyn", "mujoco"])
    parser.add_argument("--robots", nargs="+", default=list(VARIANT), choices=list(VARIANT))
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=list(SCENARIOS))
    parser.add_argument("--mpc", action="store_true",
                        help="plug the centroidal MPC (MpcLocomotion, its defaults) into each controller")
    parser.add_argument("--urdf", type=Path, help="run this robot's URDF instead of the built-in ones")
    parser.add_argument("--feet", nargs="+", default=[], help="with --urdf: its foot frames")
    stance = parser.add_mutually_exclusive_group()
    stance.add_argument("--stance", nargs="+", type=float, default=[],
                        help="with --urdf: its movable joints' nominal angles [rad], in the model's order")
    stance.add_argument("--leg-stance", nargs="+", type=float, default=[],
                        help="with --urdf: one leg's nominal angles [rad], the same for every leg")
    stance.add_argument("--srdf", type=Path, help="with --urdf: an SRDF whose --state has the nominal angles")
    parser.add_argument("--state", default="standing", help="with --srdf: its group_state (default standing)")
    parser.add_argument("--joint", type=srdf_states.joint_angle, action="append", default=[],
                        help="with --srdf: a joint's nominal angle, NAME=RAD (repeat; sets a joint the state "
                             "lacks or overrides one it gives)")
    parser.add_argument("--balance-inertia", action="store_true",
                        help="with --urdf: simulate its non-physical link inertias repaired")
    parser.add_argument("--foot-radius", type=float, default=0.0,
                        help="with --urdf: a contact sphere of this radius [m] centred at each foot frame "
                             "the URDF gives no collision sphere (its feet collide as meshes)")
    args = parser.parse_args()
    robots = {name: VARIANT[name] for name in args.robots}
    if args.urdf is not None:
        robots = {args.urdf.stem: _robot_from_arguments(parser, args)}
    print(f"{'robot':<16} {'engine':<8} {'scenario':<24} {'result':<6} figure", flush=True)
    passed = total = 0
    for robot in robots.values():
        for engine in args.engines:
            for scenario in args.scenarios:
                row = evaluate(robot, engine, scenario, args.mpc)
                passed, total = passed + row.passed, total + 1
                result = "pass" if row.passed else "FAIL"
                print(f"{row.robot:<16} {row.engine:<8} {row.scenario:<24} {result:<6} {row.figure()}",
                      flush=True)
    planned = "; no failed or late MPC solve" if args.mpc else ""
    print(f"{passed} of {total} rows pass (bounds: RMSE <= {LINEAR_BOUND} m/s, {YAW_BOUND} rad/s; no fall, "
          f"no failed or fallback QP{planned}; relaxed ticks allowed)")


if __name__ == "__main__":
    main()

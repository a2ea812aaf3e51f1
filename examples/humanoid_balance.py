"""A humanoid on flat feet balancing under the whole-body QP with the default task weights, on kinodyn.sim or
MuJoCo: 10 s standing with a push of 0.1 x its weight for 0.2 s at 5 s (forwards, or sideways with
``--push-axis y``). Any humanoid URDF whose feet touch the ground with collision spheres under their soles
(at least four per foot, centres in a plane parallel to the foot link's x-y plane) or with one box collision
each (in the foot link's axes: spheres of 5 mm are added under its bottom corners), or, for feet whose
collisions are meshes, a sole rectangle given about each foot frame (``--sole``: spheres of 5 mm at its
corners); no ROS.

The controller (``WholeBodyController``, weighted, 500 Hz, its torque held between ticks): CoM and base
orientation tasks at 3 Hz, a posture task at 1 Hz towards the nominal stance (``wbc_scenarios.pd_gains``: the
gains from the error dynamics, critically damped), all at the default weight 1; a ``SurfaceContact`` (6-D,
its defaults: contact feedback and wrench regularisation) at each sole, friction 0.75 of the ground's.

Each sole is derived from its foot's contact spheres: a frame ``<foot>_sole`` added to the URDF on the foot
link, centred between the spheres (the middle of their x and y spans) at their lowest points, axes the foot
link's; its half-length and half-width the smallest distance of a sphere centre from that middle along x and
along y (for spheres at the corners of a rectangle, that rectangle; at the corners of a trapezoid, the
rectangle inside it). The QP keeps the centre of pressure within ``COP_MARGIN`` (0.9) of that rectangle:
pushed, the QP otherwise loads a sole's outer toe corner alone, and the foot tips over it (the 29-DoF G1 on
MuJoCo).

A run passes when the base never drops 5 cm below its start, the CoM stays within 8 cm of its reference
through the push and within 1 cm of it from 2 s after the push, and every foot sphere touches the ground at
the end.

Usage: ``python examples/humanoid_balance.py`` (the generated humanoid, ``urdf/generate.py humanoid()``),
or ``--urdf FILE --feet LEFT RIGHT [--srdf FILE [--state NAME]] [--joint NAME=RAD ...]`` (the stance: an SRDF
state, ``half_sitting`` by default, ``srdf_states``, the joints it names that the URDF does not move left out
in one line, then the joints named; the others at 0); ``--sole FRONT BACK LEFT RIGHT``: the distances from
each foot frame (z up, e.g. example-robot-data's Romeo ``l_sole``, on its sole's plane) to its sole's edges
along +x, -x, +y, -y, for feet without collision spheres or a box (``--sole-depth M``: the sole's plane
``M`` below the foot frame, as TSID's ``lz``); ``--engine
kinodyn|mujoco``, ``--push-axis x|y``; the ground: ``--contact hard|soft`` (on kinodyn.sim ``hard`` by
default, its impulse model: on the soft model's compliant ground light, narrow feet such as the Unitree G1's
roll under the controller's torques and the run fails, docs/simulator.md; MuJoCo has its solver's, ``soft``),
``--stiffness-per-kg``, ``--damping-per-kg``, and the simulator's ``--dt``; ``--balance-inertia`` repairs
non-physical link inertias (MuJoCo refuses them). ``build`` keeps the simulator's own default (``soft``). Exit
status 0 when the run passes, 1 when not.
"""

from __future__ import annotations

import argparse
import copy
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from xml.etree import ElementTree

import numpy as np
import srdf_states
import wbc_scenarios as scenarios
from kinodyn.control.wbc import SurfaceContact, WholeBodyController
from kinodyn.control.wbc.tasks import BaseOrientationTask, ComTask, PostureTask
from kinodyn.urdf import read_urdf

import kinodyn as kd
from kinodyn import sim

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "urdf"))
import generate  # noqa: E402  (urdf/generate.py, after the path)

if TYPE_CHECKING:
    from kinodyn.urdf import ParsedURDF

G = 9.81
CONTROL_HZ = 500.0
SECONDS, PUSH_AT, PUSH_SECONDS, PUSH_RATIO = 10.0, 5.0, 0.2, 0.1  # s, s, s, of the weight
SETTLE_AFTER_PUSH = 2.0  # s: from then on the CoM must be back
MAX_SAG, MAX_COM_ERROR, MAX_SETTLED_ERROR = 0.05, 0.08, 0.01  # m
PLANE_TOLERANCE = 1e-3  # m: the sphere centres' heights in the foot frame may differ this much
MIN_SOLE_SPHERES = 4
COP_MARGIN = 0.9  # the QP's centre-of-pressure rectangle over the sole's: an edge loaded alone tips over
SOLE_SPHERE_RADIUS = 0.005  # m: the spheres put under a box sole's corners


@dataclass(frozen=True)
class Sole:
    """A sole frame added on ``foot`` at ``center`` (foot frame) and its half sizes [m]."""

    foot: str
    frame: str
    center: tuple[float, float, float]
    half_length: float
    half_width: float


@dataclass
class Balance:
    """The humanoid standing in the simulator under the WBC."""

    model: kd.Model
    loop: scenarios.ClosedLoop
    q0: np.ndarray
    soles: tuple[Sole, ...]
    foot_spheres: int

    @property
    def mass(self) -> float:
        return float(self.model.total_mass)


@dataclass(frozen=True)
class Figures:
    max_com_error: float  # m, through the whole run
    settled_com_error: float  # m, from SETTLE_AFTER_PUSH after the push to the end
    sag: float  # m, the base's lowest point below its start
    soles_down: bool  # every foot sphere touching at the end
    seconds: float  # simulated

    @property
    def passed(self) -> bool:
        return (self.seconds >= SECONDS - 1e-9 and self.sag < MAX_SAG and self.max_com_error < MAX_COM_ERROR
                and self.settled_com_error < MAX_SETTLED_ERROR and self.soles_down)

    def __str__(self) -> str:
        return (f"{'PASS' if self.passed else 'FAIL'}: {self.seconds:.2f} s simulated; CoM error at most "
                f"{self.max_com_error:.4f} m (bound {MAX_COM_ERROR}), {self.settled_com_error:.4f} m from "
                f"{SETTLE_AFTER_PUSH:g} s after the push (bound {MAX_SETTLED_ERROR}); base at most "
                f"{self.sag:.4f} m below its start (bound {MAX_SAG}); soles down at the end: "
                f"{self.soles_down}")


def sole_from_spheres(foot: str, spheres: list[sim.ContactSphere]) -> Sole:
    """The sole of ``foot`` from its contact spheres (module doc); ValueError naming the foot when they cannot
    carry one."""
    if len(spheres) < MIN_SOLE_SPHERES:
        raise ValueError(f"foot {foot!r} has {len(spheres)} contact sphere(s); a sole needs at least "
                         f"{MIN_SOLE_SPHERES} under its corners (<collision><sphere> on that link)")
    centers = np.array([s.center for s in spheres])
    if np.ptp(centers[:, 2]) > PLANE_TOLERANCE:
        raise ValueError(f"the contact spheres of foot {foot!r} are not in one plane parallel to its x-y "
                         f"plane (centre heights {np.round(centers[:, 2], 4).tolist()} m in its frame)")
    middle = (centers[:, :2].max(axis=0) + centers[:, :2].min(axis=0)) / 2
    half_length, half_width = np.abs(centers[:, :2] - middle).min(axis=0)
    if min(half_length, half_width) <= 0.0:
        raise ValueError(f"the contact spheres of foot {foot!r} span no area (a sole needs spheres on both "
                         f"sides of its middle along x and along y)")
    bottom = float(min(s.center[2] - s.radius for s in spheres))
    return Sole(foot, f"{foot}_sole", (float(middle[0]), float(middle[1]), bottom), float(half_length),
                float(half_width))


def corner_spheres(foot: str, edges: tuple[float, float, float, float], bottom: float = 0.0
                   ) -> list[sim.ContactSphere]:
    """Spheres of ``SOLE_SPHERE_RADIUS`` on ``foot`` at the corners of the rectangle whose edges are ``edges``
    (front, back, left, right: the distances from the foot frame's origin along +x, -x, +y, -y, m), their
    lowest points at height ``bottom`` in the foot frame."""
    front, back, left, right = edges
    r = SOLE_SPHERE_RADIUS
    return [sim.ContactSphere(foot, (x, y, bottom + r), r) for x in (front, -back) for y in (left, -right)]


def box_corner_spheres(urdf: ParsedURDF, foot: str) -> list[sim.ContactSphere]:
    """``corner_spheres`` under the corners of the foot link's one box collision, their lowest points on the
    box's bottom face; ValueError when it has none, several, or one turned out of the link's axes."""
    link = next(link for link in urdf.robot.links if link.name == foot)
    boxes = [c for c in link.collisions if type(c.geometry).__name__ == "Box"]
    if len(boxes) != 1:
        raise ValueError(f"foot {foot!r} has fewer than {MIN_SOLE_SPHERES} contact spheres and {len(boxes)} "
                         f"box collisions; a sole needs {MIN_SOLE_SPHERES} or more <collision><sphere> under "
                         f"its corners, or one <collision><box>")
    origin = boxes[0].origin
    center = list(origin.xyz) if origin is not None and origin.xyz is not None else [0.0, 0.0, 0.0]
    rpy = list(origin.rpy) if origin is not None and origin.rpy is not None else [0.0, 0.0, 0.0]
    size = list(boxes[0].geometry.size)
    if any(rpy):
        raise ValueError(f"foot {foot!r}: its box collision is turned (rpy {rpy}); a sole box must have the "
                         f"foot link's axes")
    return corner_spheres(foot, (center[0] + size[0] / 2, size[0] / 2 - center[0], center[1] + size[1] / 2,
                                 size[1] / 2 - center[1]), center[2] - size[2] / 2)


def with_soles(urdf: str, feet: tuple[str, ...], edges: tuple[float, float, float, float] | None = None,
               depth: float = 0.0) -> tuple[str, tuple[Sole, ...]]:
    """``urdf`` with a fixed sole frame added on each foot (module doc), and sphere collisions under the
    corners of a box sole that had none (or, given ``edges``, at the corners of that rectangle about each foot
    frame, ``depth`` below it, ``corner_spheres``, on feet without spheres of their own), and the soles;
    ValueError (``URDFError``) for a URDF that is not usable, and naming a foot that is not a link or cannot
    carry a sole."""
    parsed = read_urdf(urdf)
    root = copy.deepcopy(parsed.root)
    links = {link.get("name"): link for link in root.findall("link")}
    spheres = sim.collision_spheres(parsed)
    soles = []
    for foot in feet:
        if foot not in links:
            raise ValueError(f"foot {foot!r} is not a link of the URDF")
        own = [s for s in spheres if s.link == foot]
        if edges is not None and own:
            raise ValueError(f"foot {foot!r} has {len(own)} collision sphere(s): a sole given by its edges "
                             f"is for a foot without (the simulators would touch the ground with both)")
        if edges is not None or len(own) < MIN_SOLE_SPHERES:
            own = (corner_spheres(foot, edges, -depth) if edges is not None
                   else box_corner_spheres(parsed, foot))
            for sphere in own:
                collision = ElementTree.SubElement(links[foot], "collision")
                ElementTree.SubElement(collision, "origin", xyz=" ".join(repr(c) for c in sphere.center))
                ElementTree.SubElement(ElementTree.SubElement(collision, "geometry"), "sphere",
                                       radius=repr(sphere.radius))
        sole = sole_from_spheres(foot, own)
        if sole.frame in links:
            raise ValueError(f"the URDF already has a link {sole.frame!r}, the sole frame this adds")
        ElementTree.SubElement(root, "link", name=sole.frame)
        joint = ElementTree.SubElement(root, "joint", name=f"{sole.frame}_fixed", type="fixed")
        ElementTree.SubElement(joint, "parent", link=foot)
        ElementTree.SubElement(joint, "child", link=sole.frame)
        ElementTree.SubElement(joint, "origin", xyz=" ".join(repr(c) for c in sole.center), rpy="0 0 0")
        soles.append(sole)
    return ElementTree.tostring(root, encoding="unicode"), tuple(soles)


def stance(model: kd.Model, angles: dict[str, float]) -> np.ndarray:
    """The movable joints' nominal angles in the model's order: ``angles`` by name, 0 for the others;
    ValueError naming an unknown joint."""
    movable = list(model.joint_names)
    if len(movable) != model.nq - 7:
        raise ValueError("every movable joint must have one coordinate (revolute or prismatic)")
    unknown = sorted(set(angles) - set(movable))
    if unknown:
        raise ValueError(f"no movable joint named {', '.join(unknown)} (the model's: {', '.join(movable)})")
    return np.array([angles.get(name, 0.0) for name in movable])


def build(urdf: str, feet: tuple[str, ...], angles: dict[str, float], engine: str = "kinodyn",
          dt: float = 1e-3, ground: dict[str, float | str] | None = None,
          sole_options: dict[str, float] | None = None, balance_inertia: bool = False,
          sole_edges: tuple[float, float, float, float] | None = None, sole_depth: float = 0.0) -> Balance:
    """The humanoid standing level at ``angles`` with its soles on the ground, under the WBC (module doc);
    ``ground``: ``ContactModel`` gains (e.g. ``stiffness_per_kg``), ``sole_options``: ``SurfaceContact``
    fields, beyond their defaults; ``balance_inertia``: repair non-physical link inertias in the simulator
    (``create_backend``); ``sole_edges``, ``sole_depth``: the soles' rectangle about each foot frame, that far
    below it (``with_soles``)."""
    text, soles = with_soles(urdf, feet, sole_edges, sole_depth)
    model = kd.Model.from_urdf(text, floating_base=True)
    foot_spheres = [s for s in sim.collision_spheres(text) if s.link in feet]
    contact = sim.ContactModel(tuple(foot_spheres), **(ground or {}))
    simulator = sim.create_backend(engine, text, model, dt=dt, integrator="rk4", contact=contact,
                                   balance_inertia=balance_inertia)
    nominal = stance(model, angles)
    q0 = model.neutral()
    q0[7:] = nominal
    q0[2] = -min(model.frame_placement(q0, sole.frame)[2, 3] for sole in soles)
    simulator.reset(q0)
    mu = scenarios.FRICTION_MARGIN * contact.friction
    options = sole_options or {}
    wbc = WholeBodyController(model, [SurfaceContact(sole.frame, COP_MARGIN * sole.half_length,
                                                     COP_MARGIN * sole.half_width, mu=mu, **options)
                                      for sole in soles])
    kp, kd_ = scenarios.pd_gains(scenarios.BASE_HZ)
    com = ComTask(kp, kd_)
    com.set_reference(model.com(q0))
    base = BaseOrientationTask(model, kp, kd_)
    base.set_reference(np.eye(3))
    for task in (com, base, PostureTask(model, nominal, *scenarios.pd_gains(scenarios.POSTURE_HZ))):
        wbc.add_task(task)  # the default weight, 1
    return Balance(model, scenarios.ClosedLoop(simulator, wbc, CONTROL_HZ), q0, soles, len(foot_spheres))


def balance(robot: Balance, push_axis: str = "x", seconds: float = SECONDS) -> Figures:
    """Stand ``seconds`` with the push at ``PUSH_AT`` along ``push_axis``; stops early once the base is
    ``MAX_SAG`` below its start (a fall). A failed solve raises ``ControlError``."""
    model, simulator = robot.model, robot.loop.sim
    wrench = np.zeros(6)
    wrench["xy".index(push_axis)] = PUSH_RATIO * robot.mass * G
    reference = model.com(robot.q0)
    max_error = settled = sag = 0.0
    pushed = False
    while simulator.t < seconds - 1e-9 and sag < MAX_SAG:
        if not pushed and simulator.t >= PUSH_AT - 1e-9:
            simulator.apply_wrench(model.body_names[1], wrench, PUSH_SECONDS)
            pushed = True
        robot.loop.tick()
        error = float(np.linalg.norm(model.com(simulator.q) - reference))
        max_error = max(max_error, error)
        if simulator.t > PUSH_AT + PUSH_SECONDS + SETTLE_AFTER_PUSH:
            settled = max(settled, error)
        sag = max(sag, robot.q0[2] - simulator.q[2])
    return Figures(max_error, settled, sag, bool(simulator.in_contact.all()), simulator.t)


def generated_humanoid() -> tuple[str, tuple[str, ...], dict[str, float]]:
    """``urdf/generate.py``'s humanoid: its URDF, feet and nominal stance."""
    robot = generate.humanoid()
    return (generate.render(robot), ("L_SOLE", "R_SOLE"),
            {joint.name: joint.nominal for joint in robot.controlled})


def srdf_angles(urdf: str, srdf: Path, state: str) -> dict[str, float]:
    """The SRDF state's angles of the URDF's movable joints; the joints it names that the model does not move
    are left out in one printed line (``srdf_states.for_model``). ValueError for an SRDF or URDF that is not
    usable."""
    with warnings.catch_warnings():  # the model's URDFWarnings: build() reads the URDF again and gives them
        warnings.simplefilter("ignore")
        movable = kd.Model.from_urdf(urdf, floating_base=True).joint_names
    return srdf_states.for_model(srdf, state, movable)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urdf", type=Path, help="a humanoid URDF (default: the generated humanoid)")
    parser.add_argument("--feet", nargs="+", help="with --urdf: the links carrying the soles' spheres (with "
                        "--sole: the sole frames)")
    parser.add_argument("--joint", type=srdf_states.joint_angle, action="append", default=[],
                        help="with --urdf: a joint's nominal angle, NAME=RAD (repeat; others stand at 0)")
    parser.add_argument("--srdf", type=Path, help="with --urdf: an SRDF whose --state has the nominal angles "
                        "(--joint overrides them)")
    parser.add_argument("--state", default="half_sitting", help="with --srdf: its group_state")
    parser.add_argument("--sole", type=float, nargs=4, metavar=("FRONT", "BACK", "LEFT", "RIGHT"),
                        help="with --urdf: feet whose collisions are meshes: each --feet frame's sole, the "
                        "distances from its origin to the sole's edges along its +x, -x, +y, -y [m] (TSID's "
                        "lxp lxn lyp lyn), z up")
    parser.add_argument("--sole-depth", type=float, default=0.0, metavar="M",
                        help="with --sole: the sole's plane this far below each foot frame [m] (TSID's lz)")
    parser.add_argument("--engine", choices=sim.backend_names(), default="kinodyn")
    parser.add_argument("--push-axis", choices=("x", "y"), default="x")
    parser.add_argument("--dt", type=float, default=1e-3, help="simulator step [s]")
    parser.add_argument("--contact", choices=sim.contact.CONTACT_KINDS,
                        help="ground contact model (default: hard on kinodyn, soft, its only one, on mujoco)")
    parser.add_argument("--stiffness-per-kg", type=float, help="ground spring per kg of robot [N/m/kg]")
    parser.add_argument("--damping-per-kg", type=float, help="ground damper per kg of robot [N s/m/kg]")
    parser.add_argument("--balance-inertia", action="store_true",
                        help="repair non-physical link inertias in the simulator (MuJoCo refuses them)")
    args = parser.parse_args(argv)
    if args.urdf is None:
        if args.feet or args.joint or args.srdf or args.sole or args.sole_depth:
            parser.error("--feet, --joint, --srdf, --sole and --sole-depth go with --urdf")
        urdf, feet, angles = generated_humanoid()
    else:
        if not args.urdf.is_file():
            parser.error(f"--urdf {args.urdf}: no such file")
        if not args.feet:
            parser.error("--urdf needs --feet (the links carrying the soles' contact spheres, or with --sole "
                         "the sole frames)")
        if args.sole and not (np.all(np.isfinite(args.sole)) and args.sole[0] + args.sole[1] > 0.0
                              and args.sole[2] + args.sole[3] > 0.0):
            parser.error(f"--sole FRONT BACK LEFT RIGHT: finite distances spanning a length and a width "
                         f"(FRONT + BACK > 0, LEFT + RIGHT > 0), got {args.sole}")
        if not np.isfinite(args.sole_depth) or (args.sole_depth and not args.sole):
            parser.error(f"--sole-depth goes with --sole and is a finite distance, got {args.sole_depth}")
        urdf, feet = args.urdf.read_text(), tuple(args.feet)
        try:
            angles = srdf_angles(urdf, args.srdf, args.state) if args.srdf else {}
        except ValueError as error:
            parser.error(str(error))
        angles |= dict(args.joint)
    kind = args.contact or ("hard" if args.engine == "kinodyn" else "soft")
    ground: dict[str, float | str] = {"kind": kind}
    ground |= {name: value for name, value in (("stiffness_per_kg", args.stiffness_per_kg),
                                                ("damping_per_kg", args.damping_per_kg)) if value is not None}
    try:
        robot = build(urdf, feet, angles, args.engine, args.dt, ground, balance_inertia=args.balance_inertia,
                      sole_edges=tuple(args.sole) if args.sole else None, sole_depth=args.sole_depth)
    except ValueError as error:
        parser.error(str(error))
    print(f"{robot.mass:.1f} kg, {robot.model.nv - 6} joints, soles "
          + ", ".join(f"{s.frame} {2 * s.half_length:.3f} x {2 * s.half_width:.3f} m" for s in robot.soles)
          + f"; {args.engine}, {kind} contact, push {PUSH_RATIO:g} x weight along {args.push_axis} at "
          f"{PUSH_AT:g} s", flush=True)
    try:
        figures = balance(robot, args.push_axis)
    except scenarios.ControlError as error:
        print(f"FAIL: {error}")
        return 1
    print(figures)
    return 0 if figures.passed else 1


if __name__ == "__main__":
    sys.exit(main())

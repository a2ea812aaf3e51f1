"""In-process cases: the core API, URDF text through ``Model.from_urdf``, and the simulator (no ROS).

Each case's payload is a zero-argument callable; ``matrix.classify_call`` runs it and classifies the outcome.
The URDF cases are the front door's corpus (test/urdf_corpus.py) plus the path and
file forms a new user tries; the corpus gives the exact message each must carry.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from kinodyn_control.testing import QUADRUPED_STANCE, QUADRUPED_STANDING_HEIGHT

import kinodyn as kd
from kinodyn import sim, spatial
from test.bad_inputs.matrix import CLEAR, DOCUMENTED, Case, Doc
from test.urdf_corpus import BASE, REFUSED, WARNED  # pytest --import-mode=importlib names it so

if TYPE_CHECKING:
    from collections.abc import Callable

REPO = Path(__file__).resolve().parents[2]
PLANAR, ARM7, QUADRUPED = (
    str(REPO / "urdf" / f) for f in ("planar_2link.urdf", "arm7.urdf", "quadruped.urdf")
)
NAN, INF = float("nan"), float("inf")

CORE_DOC = "docs/bad-input-matrix.md"
NAN_OUT = Doc(CORE_DOC, "a NaN or infinite value in q, v, a, tau, f_ext or dt gives NaN or infinite results")
OVERFLOW = Doc(
    CORE_DOC, "a finite input whose products overflow float64 (a velocity of 1e200) gives inf or NaN"
)
ANGLES = Doc(CORE_DOC, "The core does not range-check joint positions")
ZERO_QUATERNION = Doc(CORE_DOC, "a zero base quaternion, which is no orientation, gives NaN results")
SATURATION = Doc("docs/simulator.md", "effort saturation at the URDF limits")
WARNED_DOCS = {  # test/urdf_corpus.py WARNED: the sentence of docs/urdf.md that says so
    "mimic_in_fixed_joint": Doc(
        "docs/urdf.md", "a `<mimic>` inside a fixed joint, found in real humanoid URDFs, is ignored"),
    "revolute_range_left_out": Doc(
        "docs/urdf.md", "A revolute or prismatic joint whose range is one point (`lower` and `upper` equal "
        "or both left out), which files often write to mean unbounded, is accepted with one `URDFWarning`"),
}
IK_CLOSEST = Doc(
    CORE_DOC,
    "An unreachable target gives success = False, the closest configuration found and its finite "
    "remaining errors",
)


@cache
def planar() -> kd.Model:
    return kd.Model.from_urdf(PLANAR)


@cache
def quadruped() -> kd.Model:
    return kd.Model.from_urdf(QUADRUPED, floating_base=True)


def core(
    name: str,
    given: str,
    expected: str,
    call: Callable[[], Any],
    names: tuple[str, ...] = (),
    doc: Doc | None = None,
    surface: str = "core API",
) -> Case:
    returns_finite = {NAN_OUT: False, ANGLES: True, IK_CLOSEST: True}.get(doc) if doc else None
    return Case(surface, name, given, expected, call, names, doc, returns_finite=returns_finite)


# --- the algorithms: one family of bad arguments per function ----------------------------------------------
def _q(value: float) -> np.ndarray:
    return np.array([value, 0.3])


ALGORITHMS: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    # name: (call with (model, q, v, a), the arguments it takes)
    "frame_placement": (lambda m, q, v, a: m.frame_placement(q, "tool"), ("q",)),
    "frame_jacobian": (lambda m, q, v, a: m.frame_jacobian(q, "tool", "world"), ("q",)),
    "frame_bias_acceleration": (
        lambda m, q, v, a: m.frame_bias_acceleration(q, v, "tool", "local"),
        ("q", "v"),
    ),
    "rnea": (lambda m, q, v, a: m.rnea(q, v, a), ("q", "v", "a")),
    "mass_matrix": (lambda m, q, v, a: m.mass_matrix(q), ("q",)),
    "nonlinear_effects": (lambda m, q, v, a: m.nonlinear_effects(q, v), ("q", "v")),
    "gravity_torques": (lambda m, q, v, a: m.gravity_torques(q), ("q",)),
    "coriolis_matrix": (lambda m, q, v, a: m.coriolis_matrix(q, v), ("q", "v")),
    "aba": (lambda m, q, v, a: m.aba(q, v, a), ("q", "v", "tau")),
    "com": (lambda m, q, v, a: m.com(q), ("q",)),
    "com_jacobian": (lambda m, q, v, a: m.com_jacobian(q), ("q",)),
    "centroidal_momentum_matrix": (lambda m, q, v, a: m.centroidal_momentum_matrix(q), ("q",)),
    "integrate": (lambda m, q, v, a: m.integrate(q, v, 0.01), ("q", "v")),
    "difference": (lambda m, q, v, a: m.difference(q, v), ("q0", "q1")),
}


def _algorithm_cases() -> list[Case]:
    """Per function: NaN, inf, an overflowing magnitude and a wrong length in each argument it takes
    (``difference`` takes two configurations: its second is passed where the others take v)."""
    cases = []
    for fname, (call, args) in ALGORITHMS.items():
        for position, arg in enumerate(args):

            def run(
                value: object, call: Callable[..., object] = call, position: int = position
            ) -> Callable[[], object]:
                def go() -> object:
                    inputs = [np.array([0.2, 0.3]), np.array([0.5, -0.4]), np.array([0.1, 0.2])]
                    inputs[position] = value
                    return call(planar(), *inputs)

                return go

            cases += [
                core(
                    f"{fname}_{arg}_nan",
                    f"{fname}: {arg} = [nan, 0.3]",
                    DOCUMENTED,
                    run(_q(NAN)),
                    doc=NAN_OUT,
                ),
                core(
                    f"{fname}_{arg}_wrong_length",
                    f"{fname}: {arg} of length 3 (nv = 2)",
                    CLEAR,
                    run(np.zeros(3)),
                    (arg, "shape"),
                ),
            ]
            if arg in ("q", "q0", "q1"):
                cases.append(
                    core(
                        f"{fname}_{arg}_1e300",
                        f"{fname}: {arg} = [1e300, 0.3] (finite, absurd)",
                        DOCUMENTED,
                        run(_q(1e300)),
                        doc=ANGLES,
                    )
                )
            else:
                cases.append(
                    core(
                        f"{fname}_{arg}_1e200",
                        f"{fname}: {arg} = [1e200, 0.3]",
                        DOCUMENTED,
                        run(_q(1e200)),
                        doc=OVERFLOW,
                    )
                )
    return cases


def _argument_type_cases() -> list[Case]:
    m = planar
    return [
        core("q_string", "frame_placement(q='ab')", CLEAR, lambda: m().frame_placement("ab", "tool"), ("q",)),
        core("q_none", "rnea(q=None, ...)", CLEAR, lambda: m().rnea(None, np.zeros(2), np.zeros(2)), ("q",)),
        core("q_matrix", "mass_matrix(q of shape (2, 2))", CLEAR, lambda: m().mass_matrix(np.eye(2)), ("q",)),
        core(
            "q_complex",
            "gravity_torques(q = [1+1j, 0])",
            CLEAR,
            lambda: m().gravity_torques(np.array([1 + 1j, 0])),
            ("q", "complex", "real"),
        ),
        core("q_dict", "com(q = {'joint1': 0.1})", CLEAR, lambda: m().com({"joint1": 0.1}), ("q",)),
        core(
            "v_string",
            "nonlinear_effects(v='fast')",
            CLEAR,
            lambda: m().nonlinear_effects(np.zeros(2), "fast"),
            ("v",),
        ),
        core(
            "frame_unknown",
            "frame_placement(frame='tol')",
            CLEAR,
            lambda: m().frame_placement(np.zeros(2), "tol"),
            ("frame", "tol"),
        ),
        core(
            "frame_index_out_of_range",
            "frame_placement(frame=99)",
            CLEAR,
            lambda: m().frame_placement(np.zeros(2), 99),
            ("frame", "99"),
        ),
        core(
            "frame_negative_index",
            "frame_jacobian(frame=-1)",
            CLEAR,
            lambda: m().frame_jacobian(np.zeros(2), -1, "world"),
            ("frame", "-1"),
        ),
        core(
            "frame_none",
            "frame_placement(frame=None)",
            CLEAR,
            lambda: m().frame_placement(np.zeros(2), None),
            ("frame",),
        ),
        core(
            "reference_unknown",
            "frame_jacobian(reference='global')",
            CLEAR,
            lambda: m().frame_jacobian(np.zeros(2), "tool", "global"),
            ("reference",),
        ),
        core(
            "bias_reference_unknown",
            "frame_bias_acceleration(reference='LOCAL')",
            CLEAR,
            lambda: m().frame_bias_acceleration(np.zeros(2), np.zeros(2), "tool", "LOCAL"),
            ("reference",),
        ),
        core("joint_unknown", "joint_id('joint3')", CLEAR, lambda: m().joint_id("joint3"), ("joint",)),
        core(
            "f_ext_wrong_shape",
            "rnea(..., f_ext of shape (2, 6)) on a model with 4 bodies",
            CLEAR,
            lambda: m().rnea(np.zeros(2), np.zeros(2), np.zeros(2), np.zeros((2, 6))),
            ("f_ext",),
        ),
        core(
            "f_ext_nan",
            "rnea(..., f_ext full of NaN)",
            DOCUMENTED,
            lambda: m().rnea(np.zeros(2), np.zeros(2), np.zeros(2), np.full((m().nbodies, 6), NAN)),
            doc=NAN_OUT,
        ),
        core(
            "integrate_dt_nan",
            "integrate(q, v, dt=nan)",
            DOCUMENTED,
            lambda: m().integrate(np.zeros(2), np.ones(2), NAN),
            doc=NAN_OUT,
        ),
        core(
            "random_configuration_bad_rng",
            "random_configuration(rng='seed')",
            CLEAR,
            lambda: m().random_configuration("seed"),
            ("rng", "seed"),
        ),
        core(
            "floating_q_zero_quaternion",
            "floating quadruped: frame_placement with base quaternion (0,0,0,0)",
            DOCUMENTED,
            lambda: quadruped().frame_placement(np.zeros(quadruped().nq), "base_link"),
            doc=ZERO_QUATERNION,
        ),
        core(
            "floating_q_without_base",
            "floating quadruped: rnea with q of the 12 joints only",
            CLEAR,
            lambda: quadruped().rnea(np.zeros(12), np.zeros(18), np.zeros(18)),
            ("q", "shape"),
        ),
        core(
            "floating_v_nq_long",
            "floating quadruped: rnea with v of length nq = 19 (nv = 18)",
            CLEAR,
            lambda: quadruped().rnea(quadruped().neutral(), np.zeros(19), np.zeros(18)),
            ("v", "shape"),
        ),
    ]


# --- inverse kinematics ------------------------------------------------------------------------------------
def _pose(x: float = 0.5, y: float = 0.0, z: float = 0.0) -> np.ndarray:
    target = np.eye(4)
    target[:3, 3] = (x, y, z)
    return target


def _ik(target: object = None, **kwargs: object) -> Callable[[], object]:
    return lambda: kd.solve_ik(planar(), "tool", _pose() if target is None else target, rng=0, **kwargs)


def _ik_cases() -> list[Case]:
    scaled = _pose()
    scaled[:3, :3] *= 2.0
    skewed = _pose()
    skewed[0, 1] = 0.3
    bottom = _pose()
    bottom[3] = (1, 0, 0, 1)
    return [
        core("ik_target_x_1e300", "solve_ik(target at x = 1e300)", CLEAR, _ik(_pose(1e300)), ("target",)),
        core(
            "ik_target_unreachable",
            "solve_ik(target at x = 5 m, the arm reaches 2 m)",
            DOCUMENTED,
            _ik(_pose(5.0)),
            doc=IK_CLOSEST,
        ),
        core("ik_target_x_nan", "solve_ik(target at x = nan)", CLEAR, _ik(_pose(NAN)), ("target",)),
        core("ik_target_inf", "solve_ik(target at z = -inf)", CLEAR, _ik(_pose(0.5, 0, -INF)), ("target",)),
        core(
            "ik_target_3x3",
            "solve_ik(target = 3x3 identity)",
            CLEAR,
            _ik(np.eye(3)),
            ("target", "4x4", "shape"),
        ),
        core(
            "ik_target_scaled_rotation",
            "solve_ik(target rotation = 2 I)",
            CLEAR,
            _ik(scaled),
            ("target", "rotation"),
        ),
        core(
            "ik_target_skewed_rotation",
            "solve_ik(target rotation not orthonormal)",
            CLEAR,
            _ik(skewed),
            ("target", "rotation"),
        ),
        core(
            "ik_target_bad_bottom_row",
            "solve_ik(target bottom row (1, 0, 0, 1))",
            CLEAR,
            _ik(bottom),
            ("target", "row", "homogeneous"),
        ),
        core("ik_target_string", "solve_ik(target='home')", CLEAR, _ik("home"), ("target",)),
        core(
            "ik_frame_unknown",
            "solve_ik(frame='tol')",
            CLEAR,
            lambda: kd.solve_ik(planar(), "tol", _pose()),
            ("frame", "tol"),
        ),
        core(
            "ik_seed_nan", "solve_ik(q_seed = [nan, 0])", CLEAR, _ik(q_seed=np.array([NAN, 0.0])), ("seed",)
        ),
        core(
            "ik_seed_inf", "solve_ik(q_seed = [inf, 0])", CLEAR, _ik(q_seed=np.array([INF, 0.0])), ("seed",)
        ),
        core(
            "ik_seed_wrong_length",
            "solve_ik(q_seed of length 3)",
            CLEAR,
            _ik(q_seed=np.zeros(3)),
            ("seed", "shape"),
        ),
        core(
            "ik_tolerance_negative",
            "solve_ik(position_tolerance=-1)",
            CLEAR,
            _ik(position_tolerance=-1.0),
            ("tolerance",),
        ),
        core(
            "ik_tolerance_nan",
            "solve_ik(orientation_tolerance=nan)",
            CLEAR,
            _ik(orientation_tolerance=NAN),
            ("tolerance",),
        ),
        core(
            "ik_max_iterations_zero",
            "solve_ik(max_iterations=0)",
            CLEAR,
            _ik(max_iterations=0),
            ("max_iterations",),
        ),
        core("ik_restarts_negative", "solve_ik(restarts=-1)", CLEAR, _ik(restarts=-1), ("restarts",)),
        core("ik_timeout_negative", "solve_ik(timeout=-1)", CLEAR, _ik(timeout=-1.0), ("timeout",)),
        core("ik_kind_unknown", "solve_ik(kind='pos')", CLEAR, _ik(kind="pos"), ("kind",)),
        core("ik_method_unknown", "solve_ik(method='newton')", CLEAR, _ik(method="newton"), ("method",)),
        core(
            "ik_active_joint_unknown",
            "solve_ik(active_joints=['joint9'])",
            CLEAR,
            _ik(active_joints=["joint9"]),
            ("joint9", "active_joints"),
        ),
        core(
            "ik_target_none",
            "solve_ik(frame, target=None)",
            CLEAR,
            lambda: kd.solve_ik(planar(), "tool"),
            ("target",),
        ),
    ]


# --- spatial -----------------------------------------------------------------------------------------------
def _spatial_cases() -> list[Case]:
    skew = np.eye(3)
    skew[0, 1] = 0.5
    return [
        core(
            "quat_zero",
            "quat_to_matrix((0, 0, 0, 0))",
            CLEAR,
            lambda: spatial.quat_to_matrix(np.zeros(4)),
            ("quaternion",),
        ),
        core(
            "quat_nan",
            "quat_to_matrix((nan, 0, 0, 1))",
            CLEAR,
            lambda: spatial.quat_to_matrix(np.array([NAN, 0, 0, 1.0])),
            ("quaternion", "finite"),
        ),
        core(
            "quat_normalize_zero",
            "quat_normalize((0, 0, 0, 0))",
            CLEAR,
            lambda: spatial.quat_normalize(np.zeros(4)),
            ("quaternion",),
        ),
        core(
            "quat_wrong_length",
            "quat_to_matrix((0, 0, 1))",
            CLEAR,
            lambda: spatial.quat_to_matrix(np.array([0, 0, 1.0])),
            ("quaternion", "shape", "4"),
        ),
        core(
            "matrix_to_quat_not_rotation",
            "matrix_to_quat(a sheared 3x3)",
            CLEAR,
            lambda: spatial.matrix_to_quat(skew),
            ("rotation",),
        ),
        core(
            "matrix_to_quat_nan",
            "matrix_to_quat(NaN 3x3)",
            CLEAR,
            lambda: spatial.matrix_to_quat(np.full((3, 3), NAN)),
            ("rotation", "finite"),
        ),
        core(
            "so3_log_1e300",
            "so3_log(rotation with an entry 1e300)",
            CLEAR,
            lambda: spatial.so3_log(np.diag([1e300, 1.0, 1.0])),
            ("rotation",),
        ),
        core(
            "euler_sequence_unknown",
            "euler_to_matrix(angles, 'xyw')",
            CLEAR,
            lambda: spatial.euler_to_matrix(np.zeros(3), "xyw"),
            ("sequence", "xyw"),
        ),
        core(
            "parameterization_unknown",
            "parameters_to_matrix(p, 'rodrigues2')",
            CLEAR,
            lambda: spatial.parameters_to_matrix("rodrigues2", np.zeros(3)),
            ("rodrigues2", "parameterization"),
        ),
        core(
            "homogeneous_transform_nan",
            "homogeneous_transform(I, [nan, 0, 0])",
            CLEAR,
            lambda: spatial.homogeneous_transform(np.eye(3), np.array([NAN, 0, 0])),
            ("translation",),
        ),
        core(
            "rotvec_1e300",
            "rotvec_to_matrix((1e300, 0, 0))",
            DOCUMENTED,
            lambda: spatial.rotvec_to_matrix(np.array([1e300, 0, 0])),
            doc=OVERFLOW,
        ),
    ]


# --- simulator ---------------------------------------------------------------------------------------------
def _stepped(
    setup: Callable[[sim.Simulator], None],
    tau: object = (0.0, 0.0),
    steps: int = 200,
    model: Callable[[], kd.Model] = planar,
    **kwargs: object,
) -> Callable[[], object]:
    def go() -> object:
        s = sim.Simulator(model(), **kwargs)
        setup(s)
        for _ in range(steps):
            s.step(np.asarray(tau))
        return s.q, s.v

    return go


def _none(s: sim.Simulator) -> None:
    return None


def _simulator_cases() -> list[Case]:
    m, physics = planar, "simulator/physics"

    def quad_push(force: float) -> Callable[[sim.Simulator], None]:
        def setup(s: sim.Simulator) -> None:
            s.reset(_standing_quadruped())
            s.apply_wrench("base_link", [force, 0, 0, 0, 0, 0], 0.01)

        return setup

    def contact(**kwargs: object) -> Callable[[], object]:
        return lambda: sim.ContactModel(spheres=sim.collision_spheres(QUADRUPED), **kwargs)

    return [
        Case(physics, *c)
        for c in [
            ("sim_dt_zero", "Simulator(dt=0)", CLEAR, lambda: sim.Simulator(m(), dt=0.0), ("dt",)),
            ("sim_dt_negative", "Simulator(dt=-1e-3)", CLEAR, lambda: sim.Simulator(m(), dt=-1e-3), ("dt",)),
            ("sim_dt_nan", "Simulator(dt=nan)", CLEAR, lambda: sim.Simulator(m(), dt=NAN), ("dt",)),
            ("sim_dt_inf", "Simulator(dt=inf)", CLEAR, lambda: sim.Simulator(m(), dt=INF), ("dt",)),
            (
                "sim_integrator_unknown",
                "Simulator(integrator='euler')",
                CLEAR,
                lambda: sim.Simulator(m(), integrator="euler"),
                ("integrator",),
            ),
            (
                "sim_friction_velocity_zero",
                "Simulator(joint_friction_velocity=0)",
                CLEAR,
                lambda: sim.Simulator(m(), joint_friction_velocity=0.0),
                ("joint_friction_velocity",),
            ),
            (
                "sim_reset_q_nan",
                "reset(q=[nan, 0])",
                CLEAR,
                lambda: sim.Simulator(m()).reset(_q(NAN)),
                ("q",),
            ),
            (
                "sim_reset_v_inf",
                "reset(v=[inf, 0])",
                CLEAR,
                lambda: sim.Simulator(m()).reset(np.zeros(2), np.array([INF, 0])),
                ("v",),
            ),
            (
                "sim_reset_wrong_length",
                "reset(q of length 3)",
                CLEAR,
                lambda: sim.Simulator(m()).reset(np.zeros(3)),
                ("q", "shape"),
            ),
            ("sim_step_tau_nan", "step(tau=[nan, 0])", CLEAR, _stepped(_none, (NAN, 0.0), 1), ("tau",)),
            ("sim_step_tau_inf", "step(tau=[-inf, 0])", CLEAR, _stepped(_none, (-INF, 0.0), 1), ("tau",)),
            (
                "sim_step_tau_wrong_length",
                "step(tau of length 3)",
                CLEAR,
                _stepped(_none, (0.0, 0.0, 0.0), 1),
                ("tau", "shape"),
            ),
            (
                "sim_step_tau_1e300",
                "step(tau=[1e300, 0]) x200 (saturated at the URDF effort limit)",
                DOCUMENTED,
                _stepped(_none, (1e300, 0.0)),
                (),
                SATURATION,
            ),
            ("sim_step_tau_string", "step(tau='max')", CLEAR, _stepped(_none, "max", 1), ("tau",)),
            (
                "sim_push_nan",
                "apply_wrench(link, [nan, 0, 0, 0, 0, 0], 0.1)",
                CLEAR,
                lambda: sim.Simulator(m()).apply_wrench("link2", [NAN, 0, 0, 0, 0, 0], 0.1),
                ("wrench",),
            ),
            (
                "sim_push_wrong_length",
                "apply_wrench(link, [1, 0, 0], 0.1)",
                CLEAR,
                lambda: sim.Simulator(m()).apply_wrench("link2", [1.0, 0, 0], 0.1),
                ("wrench",),
            ),
            (
                "sim_push_duration_zero",
                "apply_wrench(link, wrench, 0)",
                CLEAR,
                lambda: sim.Simulator(m()).apply_wrench("link2", [1.0, 0, 0, 0, 0, 0], 0.0),
                ("duration",),
            ),
            (
                "sim_push_unknown_link",
                "apply_wrench('lnk2', wrench, 0.1)",
                CLEAR,
                lambda: sim.Simulator(m()).apply_wrench("lnk2", [1.0, 0, 0, 0, 0, 0], 0.1),
                ("lnk2", "frame", "link"),
            ),
            (
                "sim_push_1e8_quadruped",
                "floating quadruped on the ground: 1e8 N push on the base for 10 ms",
                CLEAR,
                _stepped(quad_push(1e8), (0.0,) * 12, 50, quadruped, contact=_quadruped_contact()),
                ("diverged", "non-finite", "push"),
            ),
            (
                "sim_push_1e300_quadruped",
                "floating quadruped: 1e300 N push on the base",
                CLEAR,
                _stepped(quad_push(1e300), (0.0,) * 12, 50, quadruped, contact=_quadruped_contact()),
                ("diverged", "non-finite", "push", "wrench"),
            ),
            (
                "sim_imu_unknown_frame",
                "add_imu('imu_lnk')",
                CLEAR,
                lambda: sim.Simulator(m()).add_imu("imu_lnk"),
                ("imu_lnk", "frame"),
            ),
            (
                "sim_contact_negative_stiffness",
                "ContactModel(stiffness=-1)",
                CLEAR,
                contact(stiffness=-1.0),
                ("stiffness",),
            ),
            (
                "sim_contact_nan_friction",
                "ContactModel(friction=nan)",
                CLEAR,
                contact(friction=NAN),
                ("friction",),
            ),
            (
                "sim_contact_kind_unknown",
                "ContactModel(kind='rigid-ish')",
                CLEAR,
                contact(kind="rigid-ish"),
                ("kind",),
            ),
        ]
    ]


@cache
def _quadruped_contact() -> sim.ContactModel:
    return sim.ContactModel(spheres=sim.collision_spheres(QUADRUPED))


def _standing_quadruped() -> np.ndarray:

    q = quadruped().neutral()
    q[2] = QUADRUPED_STANDING_HEIGHT
    q[7:] = QUADRUPED_STANCE
    return q


# --- URDF --------------------------------------------------------------------------------------------------
def _summary(model: kd.Model) -> tuple[int, np.ndarray]:
    """What an accepted URDF must give: its size and a finite mass matrix at the neutral configuration (a
    model's own limit arrays may hold inf: unbounded joints)."""
    return model.nq, model.mass_matrix(model.neutral())


def _from_urdf(source: str | bytes | Path) -> Callable[[], Any]:
    return lambda: _summary(kd.Model.from_urdf(source))  # type: ignore[arg-type]


def _urdf_cases(tmp: Path) -> list[Case]:
    cases = [
        Case(
            "URDF",
            f"corpus_{name}",
            f"test/urdf_corpus.py REFUSED[{name!r}]",
            CLEAR,
            _from_urdf(text),
            (message,),
        )
        for name, (text, message) in sorted(REFUSED.items())
    ]
    cases += [
        Case(
            "URDF",
            f"corpus_{name}",
            f"test/urdf_corpus.py WARNED[{name!r}] (accepted with a warning)",
            DOCUMENTED,
            _from_urdf(text),
            (message,),
            WARNED_DOCS[name],
        )
        for name, (text, message) in sorted(WARNED.items())
    ]
    binary = tmp / "robot.urdf.gz"
    binary.write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(256)))
    empty = tmp / "empty.urdf"
    empty.write_text("")
    latin = tmp / "latin1.urdf"
    latin.write_bytes(BASE.replace("corpus", "caf\xe9").encode("latin-1"))
    cases += [
        Case("URDF", *c)
        for c in [
            (
                "file_binary",
                "Model.from_urdf(a gzip file's path)",
                CLEAR,
                _from_urdf(binary),
                ("UTF-8", "text"),
            ),
            ("file_empty", "Model.from_urdf(an empty file's path)", CLEAR, _from_urdf(empty), ("empty",)),
            ("file_latin1", "Model.from_urdf(a Latin-1 file's path)", CLEAR, _from_urdf(latin), ("UTF-8",)),
            (
                "file_missing",
                "Model.from_urdf('/nonexistent/robot.urdf')",
                CLEAR,
                _from_urdf("/nonexistent/robot.urdf"),
                ("/nonexistent/robot.urdf", "not found", "no such"),
            ),
            (
                "file_directory",
                "Model.from_urdf(a directory)",
                CLEAR,
                _from_urdf(tmp),
                (str(tmp), "directory"),
            ),
            (
                "path_object_missing",
                "Model.from_urdf(Path('robot.urdf')), no such file",
                CLEAR,
                _from_urdf(Path("robot.urdf")),
                ("robot.urdf",),
            ),
            ("text_empty", "Model.from_urdf('')", CLEAR, _from_urdf(""), ("empty",)),
            (
                "text_bytes_binary",
                "Model.from_urdf(PNG bytes)",
                CLEAR,
                _from_urdf(b"\x89PNG\r\n\x1a\n\x00\xff"),
                ("UTF-8", "text"),
            ),
            (
                "text_html",
                "Model.from_urdf('<html>...</html>')",
                CLEAR,
                _from_urdf("<html><body>404</body></html>"),
                ("robot",),
            ),
            (
                "text_xacro_unexpanded",
                "Model.from_urdf(xacro with ${...} left in an origin)",
                CLEAR,
                _from_urdf(
                    BASE.replace(
                        'xyz="0 0 0.2"/><parent link="upper"/>', 'xyz="0 0 ${l}"/><parent link="upper"/>'
                    )
                ),
                ("${l}", "number"),
            ),
            (
                "text_truncated",
                "Model.from_urdf(BASE cut in half)",
                CLEAR,
                _from_urdf(BASE[: len(BASE) // 2]),
                ("well-formed", "XML"),
            ),
            (
                "floating_base_string",
                "Model.from_urdf(planar, floating_base='false') (a string, truthy)",
                CLEAR,
                lambda: _summary(kd.Model.from_urdf(PLANAR, floating_base="false")),  # type: ignore[arg-type]
                ("floating_base",),
            ),
        ]
    ]
    return cases


def core_cases(tmp: Path) -> list[Case]:
    """Every in-process case; ``tmp`` is a scratch directory for the file forms of the URDF cases."""
    return [
        *_algorithm_cases(),
        *_argument_type_cases(),
        *_ik_cases(),
        *_spatial_cases(),
        *_simulator_cases(),
        *_urdf_cases(tmp),
    ]

"""Compile every numba kernel of the core once, so the on-disk cache holds them before first use.

``python -m kinodyn.warmup`` calls each public algorithm on a small fixed-base model (revolute, continuous
and prismatic joints, a fixed link) and on the same model with a free-flyer base, calls the algorithms that
take a Data, and steps the legged filters of kinodyn.estimation (and the registry's example third filter).
The first run in an environment compiles (a few minutes on two cores); later runs load the cache and take
about a second.
``scripts/setup.sh`` runs it whenever the core's sources change, so no user or test pays the compile time;
``--jobs 2`` compiles the kernel groups (``GROUPS``) in two processes, about halving the time on two cores.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TYPE_CHECKING

import numpy as np

from kinodyn import dynamics, sim, spatial
from kinodyn.control.mpc import CentroidalMpc, MpcParameters
from kinodyn.control.wbc import PointContact, SurfaceContact, WholeBodyController
from kinodyn.control.wbc.tasks import ComTask, ContactForceTask, FrameTask, PostureTask
from kinodyn.estimation import (
    ErrorStateEKF,
    FootMeasurement,
    InvariantEKF,
    LeggedEstimator,
    LeggedFilter,
    complementary,
)
from kinodyn.estimation.legs import LegKinematics
from kinodyn.estimation.registry import FILTERS, register_filter
from kinodyn.evaluation import Evaluator
from kinodyn.ik import solve_ik
from kinodyn.model import Model

if TYPE_CHECKING:
    from collections.abc import Callable

_BOX = (
    '<inertial><mass value="{m}"/>'
    '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>'
)
_LIMIT = '<limit lower="-2" upper="2" effort="50" velocity="3"/>'
WARMUP_URDF = f"""<robot name="warmup">
  <link name="base">{_BOX.format(m=2.0)}</link>
  <link name="a">{_BOX.format(m=1.0)}</link>
  <link name="b">{_BOX.format(m=1.0)}</link>
  <link name="c">{_BOX.format(m=0.5)}</link>
  <link name="tip"><collision><geometry><sphere radius="0.02"/></geometry></collision></link>
  <joint name="ja" type="revolute"><parent link="base"/><child link="a"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/>{_LIMIT}</joint>
  <joint name="jb" type="continuous"><parent link="a"/><child link="b"/>
    <origin xyz="0.2 0 0" rpy="1.5707963 0 0"/><axis xyz="0 1 0"/></joint>
  <joint name="jc" type="prismatic"><parent link="b"/><child link="c"/>
    <origin xyz="0.3 0 0"/><axis xyz="1 0 0"/>{_LIMIT}</joint>
  <joint name="jtip" type="fixed"><parent link="c"/><child link="tip"/><origin xyz="0.1 0 0"/></joint>
</robot>"""


def _exercise_terms(model: Model, rng: np.random.Generator) -> None:
    """Kinematics and the dynamics terms, one call each."""
    q = model.random_configuration(rng)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    f_ext = np.zeros((model.nbodies, 6))
    model.frame_placement(q, "tip")
    model.frame_placements(q)
    model.frame_placements_batch(np.array([q, q]), "tip")
    for reference in ("world", "local", "local_world_aligned"):
        model.frame_jacobian(q, "tip", reference)
        model.frame_bias_acceleration(q, v, "tip", reference)
    model.com(q)
    model.com_jacobian(q)
    model.manipulability(q, "tip")
    model.difference(q, model.integrate(q, v, 0.01))
    tau = model.rnea(q, v, a)
    model.rnea(q, v, a, f_ext)
    model.aba(q, v, tau)
    model.aba(q, v, tau, f_ext)
    model.mass_matrix(q)
    model.nonlinear_effects(q, v)
    model.gravity_torques(q)
    model.coriolis_matrix(q, v)
    model.centroidal_momentum_matrix(q)
    model.kinetic_energy(q, v)
    model.potential_energy(q)


def _exercise_data(model: Model, rng: np.random.Generator) -> None:
    """The algorithms called with a Data (their own kernels, scratch from ``data.work``), one call each."""
    data = model.create_data()
    q = model.random_configuration(rng)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    model.rnea(q, v, a, data=data)
    model.mass_matrix(q, data=data)
    model.aba(q, v, a, data=data)
    model.centroidal_momentum_matrix(q, data=data)
    model.com(q, data=data)
    model.frame_placements(q, data=data)
    model.frame_jacobian(q, "tip", "world", data=data)


def _exercise_evaluation(model: Model, rng: np.random.Generator) -> None:
    """The control evaluation and the batched (serial and threaded) dynamics."""
    q = model.random_configuration(rng)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    Evaluator(model, ["tip", "a"]).evaluate(q, v)
    Q, V, A = np.array([q, q]), np.array([v, v]), np.array([a, a])
    for n in (1, 2):  # one row: the serial kernels; two: the threaded ones (with >= 2 numba threads)
        dynamics.aba_batch(model, Q[:n], V[:n], dynamics.rnea_batch(model, Q[:n], V[:n], A[:n]))


def _exercise_wbc(floating: Model, rng: np.random.Generator) -> None:
    """Whole-body control ticks (its assembly, task rows, QP checks and solver acceptance kernels): point and
    surface contacts, tau recovered and as variables, weighted and hierarchical."""
    q, v = floating.random_configuration(rng), rng.normal(size=floating.nv)
    for mode, torque_variables, contact in (("weighted", False, PointContact("tip", f_max=100.0)),
                                            ("hierarchical", True, SurfaceContact("tip", 0.02, 0.01))):
        wbc = WholeBodyController(floating, [contact], mode=mode, torque_variables=torque_variables)
        com = ComTask(10.0, 1.0)
        com.set_reference(floating.com(q))
        wbc.add_task(com)
        wbc.add_task(PostureTask(floating, q[7:], 1.0, 1.0, 1e-3), 2)
        wbc.add_task(ContactForceTask("tip", contact.dim, weight=1e-4), 2)
        frame = FrameTask(floating, "a", 10.0, 1.0, weight=1e-2)
        frame.set_reference(np.eye(4))
        wbc.add_task(frame, 2)
        wbc.update(q, v)
    wbc.limits.acceleration_bounds(q[7:], v[6:])


def _exercise_mpc(floating: Model) -> None:
    """One condensed MPC solve (its compiled Gram product) with the free flyer standing on its tip."""
    q = floating.neutral()
    mpc = CentroidalMpc.from_model(floating, ["tip"], q, MpcParameters(horizon=2, solver="condensed"))
    x0 = mpc.body.state_from_floating_base(q, np.zeros(floating.nv))
    tip = floating.frame_placement(q, "tip")[:3, 3]
    mpc.solve(x0, np.tile(x0, (2, 1)), np.ones((2, 1), dtype=bool), np.tile(tip, (2, 1, 1)))


def _exercise_filter(legged: LeggedFilter) -> None:
    """A touchdown, then propagations and stance updates of one foot (compiles the filter kernels)."""
    legged.initialize(np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
    foot = [FootMeasurement("foot", np.array([0.1, 0.0, -0.3]), 1e-6 * np.eye(3))]
    for _ in range(3):
        legged.update_contacts(foot)
        legged.propagate(np.zeros(3), np.array([0.0, 0.0, 9.81]), 0.002)


def _exercise_spatial(rng: np.random.Generator) -> None:
    """The ``kinodyn.spatial`` functions that call the compiled spatial layer, one call each."""
    phi = rng.normal(size=3)
    C = spatial.so3_exp(phi)
    quaternion = spatial.matrix_to_quat(C)
    spatial.quat_to_matrix(spatial.quat_multiply(quaternion, quaternion))
    spatial.so3_log(C)
    spatial.skew(phi)
    spatial.so3_left_jacobian(phi)
    spatial.so3_left_jacobian_inverse(phi)


def _warm_model(rng: np.random.Generator) -> None:
    _exercise_spatial(rng)
    for floating_base in (False, True):
        _exercise_terms(Model.from_urdf(WARMUP_URDF, floating_base=floating_base), rng)


def _warm_data(rng: np.random.Generator) -> None:
    for floating_base in (False, True):
        _exercise_data(Model.from_urdf(WARMUP_URDF, floating_base=floating_base), rng)


def _warm_control(rng: np.random.Generator) -> None:
    for floating_base in (False, True):
        _exercise_evaluation(Model.from_urdf(WARMUP_URDF, floating_base=floating_base), rng)
    _exercise_wbc(Model.from_urdf(WARMUP_URDF, floating_base=True), rng)
    _exercise_mpc(Model.from_urdf(WARMUP_URDF, floating_base=True))
    fixed = Model.from_urdf(WARMUP_URDF)
    solve_ik(fixed, "tip", fixed.frame_placement(fixed.random_configuration(rng), "tip"))


def _warm_simulator(rng: np.random.Generator) -> None:
    floating = Model.from_urdf(WARMUP_URDF, floating_base=True)
    spheres = sim.collision_spheres(WARMUP_URDF)
    for integrator in sim.INTEGRATORS:
        for kind in ("soft", "hard"):
            contact = sim.ContactModel(spheres, kind=kind)
            simulator = sim.Simulator(floating, integrator=integrator, contact=contact)
            simulator.add_imu("tip", sim.ImuNoise(0.01, 0.001, 0.01, 0.001), rng=0)
            simulator.reset()
            simulator.apply_wrench("a", np.ones(6), 0.002)
            for _ in range(3):
                simulator.step(np.zeros(floating.nv))


def _estimate(floating: Model, filter_name: str) -> None:
    """The compiled event loop of ``filter_name``: initialisation from standing, propagation, stance
    updates."""
    joints = np.zeros(floating.nv - 6)
    estimator = LeggedEstimator(floating, "base", ["tip"], filter=filter_name, init_duration=0.01)
    estimator.add_contacts(0.0, {"tip": True})
    for k in range(10):
        estimator.add_imu(0.002 * k, np.zeros(3), np.array([0.0, 0.0, 9.81]))
        estimator.add_joint_state(0.002 * k + 0.001, joints, joints, joints)


def _warm_estimation(rng: np.random.Generator) -> None:
    floating = Model.from_urdf(WARMUP_URDF, floating_base=True)
    _exercise_filter(ErrorStateEKF())
    _exercise_filter(InvariantEKF())
    legs = LegKinematics(floating, "base", ["tip"], foot_radius=0.02)
    legs.measure(np.zeros(3), 1e-3, np.eye(3), ["tip"])  # with the rolling-foot correction
    legs.extrinsics.base_output(np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.eye(15), 1e-6)
    for name in FILTERS:
        _estimate(floating, name)


def _warm_third_filter(rng: np.random.Generator) -> None:
    """The registry's example third filter (``kinodyn.estimation.complementary``, which the tests register),
    registered for this call only (unless it already was)."""
    registered = "complementary" not in FILTERS
    register_filter("complementary")(complementary.ComplementaryFilter)
    try:
        _estimate(Model.from_urdf(WARMUP_URDF, floating_base=True), "complementary")
    finally:
        if registered:
            FILTERS.pop("complementary")


# Groups of kernels compiled by separate processes (``--jobs``), in the order they start: a process that is
# done takes the next group. On two processes control+simulator and estimation start together, the model
# group follows estimation, and the two short ones fill in beside it (the third filter once estimation has
# cached the loop's helpers).
GROUPS: dict[str, tuple[Callable[[np.random.Generator], None], ...]] = {
    "control+simulator": (_warm_control, _warm_simulator),
    "estimation": (_warm_estimation,),
    "model": (_warm_model,),
    "data": (_warm_data,),
    "third filter": (_warm_third_filter,),
}


def warm_up(group: str | None = None) -> float:
    """Call every compiled algorithm of ``group`` (all groups: None) once; return the seconds it took."""
    start = time.perf_counter()
    rng = np.random.default_rng(0)
    for name in GROUPS if group is None else (group,):
        for exercise in GROUPS[name]:
            exercise(rng)
    return time.perf_counter() - start


def _warm_group(group: str) -> tuple[str, float]:
    return group, warm_up(group)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1, help="processes compiling the kernel groups")
    jobs = parser.parse_args().jobs
    start = time.perf_counter()
    print(f"[kinodyn.warmup] compiling {len(GROUPS)} kernel groups ({', '.join(GROUPS)}) in "
          f"{min(jobs, len(GROUPS))} process(es)", flush=True)
    if jobs <= 1:
        for group in GROUPS:
            print(f"[kinodyn.warmup] {group} ready in {warm_up(group):.1f} s", flush=True)
    else:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            for future in as_completed([pool.submit(_warm_group, group) for group in GROUPS]):
                group, seconds = future.result()
                print(f"[kinodyn.warmup] {group} ready in {seconds:.1f} s", flush=True)
    print(f"[kinodyn.warmup] numba kernels ready in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()

"""TSID (stack-of-tasks, test-only anchor) on the quadruped standing on four point contacts.

The anchor of the whole-body controller's cross-check (src/kinodyn/test/control/test_wbc_vs_tsid.py) and of
the speed bench (bench/bench_wbc.py): ``InverseDynamicsFormulationAccForce`` with ``x = [qdd; f]``, four
``ContactPoint`` (LF/LH/RF/RH_FOOT, contact gains 0, motion constraint at level 0), ``TaskComEquality``,
``TaskSE3Equality`` on ``base_link`` (angular mask) and ``TaskJointPosture`` at level 1, solved by
``SolverHQuadProgFast``. What TSID 1.10.0 poses (read from its sources: src/formulations/inverse-
dynamics-formulation-acc-force.cpp, src/contacts/contact-point.cpp, src/tasks/task-{com-equality,se3-
equality,joint-posture}.cpp, src/solvers/solver-HQP-eiquadprog-fast.cpp, src/robots/robot-wrapper.cpp):

- level 0: the six base rows ``M_u qdd - J_c,u^T f = -h_u``; per contact ``J qdd = -Jdot v`` (the frame's
  linear rows in its local frame, classical drift; gains 0) and, always at level 0, the friction pyramid
  ``|f . t_i| <= mu f . n`` for ``t_1 = n x e_x, t_2 = n x t_1`` (four facets circumscribing the cone of
  ``mu``, inscribed in that of ``mu sqrt 2``) and ``f_min <= f . n <= f_max``;
- level 1, cost ``1/2 sum_k w_k |A_k x - b_k|^2 + 1/2 1e-8 |x|^2`` (the last term is eiquadprog-fast's
  Hessian regularisation, DEFAULT_HESSIAN_REGULARIZATION, on all of ``x``): CoM ``Jcom qdd = -kp e - kd de -
  Jcom_dot v``; base ``J_local,ang qdd = kp log3(R^T R_ref) - kd w_local`` (the free-flyer's angular drift
  is 0); posture ``qdd_j = -kp (q_j - q_ref) - kd v_j``; per contact the force regularisation added by
  ``addRigidContact(contact, w)``: ``diag(1, 1, 1e-3) f = diag(1, 1, 1e-3) f_ref`` (``f_ref = 0``) with weight
  ``w`` (world axes for the default normal ``e_z``).

``kinodyn_controller`` poses the same problem to kinodyn's WholeBodyController (docs/wbc-vs-tsid.md).

The tick (``TsidQuadruped.tick``) is what a Python control loop calls: computeProblemData (TSID's
computeAllTerms, i.e. the evaluation) + solve + getActuatorForces.

TSID runs in its own environment (.venv/tsid, scripts/install_tsid.py: the tsid 1.10.0 wheels are built
against Pinocchio 4.0.0, the project pins 4.1.0), so the project's side uses ``TsidProcess``: a worker
process of that environment running this file with ``--serve``, which answers ``solve``, ``qp`` and
``tick_times`` (ticks timed inside the worker, the loop driven from Python as a user's would be).

Not a bench: bench/bench_wbc.py times TSID's tick and kinodyn's on the same states and records the ratio.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from kinodyn.control.wbc import WholeBodyController

    from kinodyn import Model

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "urdf" / "quadruped.urdf"
TSID_PYTHON = Path(os.environ.get("KINODYN_TSID_PYTHON", ROOT / ".venv" / "tsid" / "bin" / "python"))
FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
HESSIAN_REGULARIZATION = 1e-8  # tsid/solvers/fwd.hpp DEFAULT_HESSIAN_REGULARIZATION, added to diag(H)
FORCE_AXIS_WEIGHTS = (1.0, 1.0, 1e-3)  # ContactPoint's m_weightForceRegTask: rows of A (squared in the cost)


def standing_configuration() -> np.ndarray:
    """Base level at 0.495 m, front legs HFE 0.6, KFE -1.2, hind legs (knees bending the other way) HFE
    -0.6, KFE 1.2: each foot 0.495 m straight below its hip."""
    legs = np.array([0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2])  # LF LH RF RH
    return np.concatenate([[0.0, 0.0, 0.495, 0.0, 0.0, 0.0, 1.0], legs])


@dataclass(frozen=True)
class StandingProblem:
    """Gains, weights and references of the standing problem (one set for TSID and kinodyn's WBC)."""

    mu: float = 0.7                 # TSID's coefficient: |f . t1|, |f . t2| <= mu f . n
    f_min: float = 1.0
    f_max: float = 500.0
    force_weight: float = 1e-5      # addRigidContact's force_regularization_weight
    com_kp: float = 100.0
    com_kd: float = 20.0
    com_weight: float = 1.0
    base_kp: float = 100.0
    base_kd: float = 20.0
    base_weight: float = 1.0
    posture_kp: float = 50.0
    posture_kd: float = 14.0
    posture_weight: float = 1e-2
    contact_kp: float = 0.0         # ContactPoint's Kp (all axes); kinodyn's PointContact kp
    contact_kd: float = 0.0         # ContactPoint's Kd; kinodyn's PointContact kd
    q_ref: np.ndarray = field(default_factory=standing_configuration)  # posture reference (its joints)
    com_ref: np.ndarray | None = None  # None: the CoM of q_ref (Pinocchio's, reported by TsidProcess)


class TsidQuadruped:
    """TSID's formulation and solver for ``problem`` (worker side: needs tsid and its Pinocchio).

    ``q, v`` in kinodyn's convention, which is Pinocchio's: ``q = [p, quat (x y z w), joints]``, ``v`` =
    base linear and angular velocity in the base frame, then the joints (same joint order, checked).
    """

    def __init__(self, problem: StandingProblem, joint_names: tuple[str, ...] | None = None) -> None:
        import pinocchio as pin  # noqa: PLC0415  (tsid and its Pinocchio exist only in the worker's environment)
        import tsid  # noqa: PLC0415  (as above)

        self.problem = p = problem
        self.model = pin.buildModelFromUrdf(str(URDF), pin.JointModelFreeFlyer())
        names = tuple(self.model.names[2:])
        if joint_names is not None and names != tuple(joint_names):
            raise ValueError(f"joint order differs: Pinocchio {names}, kinodyn {tuple(joint_names)}")
        self.robot = tsid.RobotWrapper(self.model, tsid.FLOATING_BASE_SYSTEM, False)
        self.formulation = tsid.InverseDynamicsFormulationAccForce("tsid", self.robot, False)
        q_ref = np.asarray(p.q_ref, dtype=float)
        self.formulation.computeProblemData(0.0, q_ref, np.zeros(self.model.nv))
        data = self.formulation.data()
        self.contacts = []  # TSID keeps references to contacts and tasks: they must outlive the formulation
        for foot in FEET:
            normal = np.array([0.0, 0.0, 1.0])
            contact = tsid.ContactPoint(foot, self.robot, foot, normal, p.mu, p.f_min, p.f_max)
            contact.useLocalFrame(False)  # default True: J_c, f and the cone in the foot's own axes
            contact.setKp(p.contact_kp * np.ones(3))
            contact.setKd(p.contact_kd * np.ones(3))
            contact.setReference(self.robot.framePosition(data, self.model.getFrameId(foot)))
            self.formulation.addRigidContact(contact, p.force_weight)
            self.contacts.append(contact)
        self.com_ref = (pin.centerOfMass(self.model, self.model.createData(), q_ref) if p.com_ref is None
                        else np.asarray(p.com_ref, dtype=float))
        com = tsid.TaskComEquality("com", self.robot)
        com.setKp(p.com_kp * np.ones(3))
        com.setKd(p.com_kd * np.ones(3))
        com.setReference(tsid.TrajectoryEuclidianConstant("com_ref", self.com_ref).computeNext())
        base = tsid.TaskSE3Equality("base", self.robot, "base_link")
        base.setKp(p.base_kp * np.ones(6))
        base.setKd(p.base_kd * np.ones(6))
        base.setMask(np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0]))
        base.setReference(tsid.TrajectorySE3Constant("base_ref", pin.SE3.Identity()).computeNext())
        posture = tsid.TaskJointPosture("posture", self.robot)
        posture.setKp(p.posture_kp * np.ones(self.robot.na))
        posture.setKd(p.posture_kd * np.ones(self.robot.na))
        posture.setReference(tsid.TrajectoryEuclidianConstant("posture_ref", q_ref[7:]).computeNext())
        self.tasks = (com, base, posture)
        for task, weight in zip(self.tasks, (p.com_weight, p.base_weight, p.posture_weight), strict=True):
            self.formulation.addMotionTask(task, weight, 1, 0.0)
        self.solver = tsid.SolverHQuadProgFast("qp")
        self.solver.resize(self.formulation.nVar, self.formulation.nEq, self.formulation.nIn)

    def tick(self, q: np.ndarray, v: np.ndarray, t: float = 0.0) -> np.ndarray:
        """One control tick from Python: problem data (the evaluation), solve, actuator torques."""
        sol = self._solve(q, v, t)
        return self.formulation.getActuatorForces(sol)

    def _solve(self, q: np.ndarray, v: np.ndarray, t: float) -> Any:  # noqa: ANN401  (tsid's HQPOutput: tsid has no type hints)
        sol = self.solver.solve(self.formulation.computeProblemData(t, q, v))
        if sol.status != 0:
            raise RuntimeError(f"TSID's QP failed (HQP status {sol.status})")
        return sol

    def solve(self, q: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
        """qdd, the four contact forces (world axes, FEET order) and tau."""
        sol = self._solve(q, v, 0.0)
        return {"qdd": self.formulation.getAccelerations(sol).copy(),
                "forces": np.array([self.formulation.getContactForce(foot, sol) for foot in FEET]),
                "tau": self.formulation.getActuatorForces(sol).copy()}

    def qp(self, q: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
        """TSID's own QP at (q, v): ``min 1/2 x^T H x + g^T x``, ``CE x + ce0 = 0``, ``CI x + ci0 >= 0``."""
        data = self.solver.retrieveQPData(self.formulation.computeProblemData(0.0, q, v))
        return {key: np.array(getattr(data, key)) for key in ("H", "g", "CE", "ce0", "CI", "ci0")}

    def tick_times(self, states: list[tuple[np.ndarray, np.ndarray]], repeats: int) -> np.ndarray:
        """Seconds per tick over ``repeats`` passes through ``states``."""
        times = []
        for _ in range(repeats):
            for q, v in states:
                t0 = time.perf_counter()
                self.tick(q, v)
                times.append(time.perf_counter() - t0)
        return np.array(times)


def serve() -> None:
    """Worker loop: pickled ``(method, args)`` on stdin, pickled ``("ok", value)`` or ``("error", text)``."""
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # TSID's own prints go to stderr, never into the channel
    requests = sys.stdin.buffer
    anchor: TsidQuadruped | None = None
    while True:
        try:
            method, args = pickle.load(requests)
        except EOFError:
            return
        try:
            if method == "start":
                problem, joint_names = args
                anchor = TsidQuadruped(StandingProblem(**problem), joint_names)
                value: Any = anchor.com_ref
            elif anchor is None:
                raise RuntimeError("no problem: send 'start' first")
            else:
                value = getattr(anchor, method)(*args)
            pickle.dump(("ok", value), channel)
        except Exception as exc:  # noqa: BLE001  (the worker's last line: every failure goes back to the caller, who raises it)
            pickle.dump(("error", f"{type(exc).__name__}: {exc}"), channel)
        channel.flush()


class TsidProcess:
    """TSID in a worker process of its own environment (``TSID_PYTHON``); use as a context manager."""

    def __init__(self, problem: StandingProblem | None = None, joint_names: tuple[str, ...] | None = None,
                 python: Path = TSID_PYTHON) -> None:
        if not python.exists():
            raise FileNotFoundError(f"TSID's environment {python} is missing: run scripts/setup.sh (or "
                                    "python scripts/install_tsid.py), or set KINODYN_TSID_PYTHON")
        self.problem = problem or StandingProblem()
        self._proc = subprocess.Popen([str(python), str(Path(__file__).resolve()), "--serve"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            self.com_ref: np.ndarray = self._call("start", dataclasses.asdict(self.problem), joint_names)
        except BaseException:
            self.close()
            raise

    def _call(self, method: str, *args: object) -> Any:  # noqa: ANN401  (the worker's unpickled answer: its type depends on method)
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        pickle.dump((method, args), self._proc.stdin)
        self._proc.stdin.flush()
        try:
            status, value = pickle.load(self._proc.stdout)
        except EOFError:
            raise RuntimeError(f"the TSID worker exited (code {self._proc.wait()}) during {method!r}; "
                               "its error is on stderr above") from None
        if status != "ok":
            raise RuntimeError(f"TSID worker, {method}: {value}")
        return value

    def solve(self, q: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
        return self._call("solve", q, v)

    def qp(self, q: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
        return self._call("qp", q, v)

    def tick_times(self, states: list[tuple[np.ndarray, np.ndarray]], repeats: int = 1) -> np.ndarray:
        return self._call("tick_times", states, repeats)

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def __enter__(self) -> TsidProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def kinodyn_problem(model: Model, problem: StandingProblem, com_ref: np.ndarray) -> tuple[list, list]:
    """TSID's contacts and tasks in kinodyn's terms (docs/wbc-vs-tsid.md): ``mu = sqrt(2) mu_T`` with 4
    facets, the force regularisation as per-row weighted ``ContactForceTask``s."""
    # kinodyn is imported here, not at the top: the TSID worker imports this module without it
    from kinodyn.control.wbc import PointContact  # noqa: PLC0415
    from kinodyn.control.wbc.tasks import (  # noqa: PLC0415
        BaseOrientationTask,
        ComTask,
        ContactForceTask,
        PostureTask,
    )

    p = problem
    contacts = [PointContact(foot, mu=np.sqrt(2.0) * p.mu, facets=4, f_min=p.f_min, f_max=p.f_max,
                             kp=p.contact_kp, kd=p.contact_kd) for foot in FEET]
    com = ComTask(p.com_kp, p.com_kd, p.com_weight)
    com.set_reference(com_ref)
    base = BaseOrientationTask(model, p.base_kp, p.base_kd, p.base_weight)
    base.set_reference(np.eye(3))
    posture = PostureTask(model, np.asarray(p.q_ref)[7:], p.posture_kp, p.posture_kd, p.posture_weight)
    force_weight = p.force_weight * np.square(FORCE_AXIS_WEIGHTS)
    forces = [ContactForceTask(foot, 3, None, force_weight) for foot in FEET]
    return contacts, [com, base, posture, *forces]


def kinodyn_controller(
    model: Model, problem: StandingProblem, com_ref: np.ndarray, **options: object
) -> WholeBodyController:
    """kinodyn's weighted WholeBodyController on TSID's problem: TSID's Hessian regularisation as its ridge,
    no joint or torque limits (TSID's problem has none). ``options``: more WholeBodyController keywords."""
    from kinodyn.control.wbc import JointLimits, WholeBodyController  # noqa: PLC0415  (as in kinodyn_problem)

    n = model.nv - 6
    unlimited = JointLimits(np.full(n, np.inf), np.full(n, -np.inf), np.full(n, np.inf), np.full(n, np.inf),
                            max_acceleration=np.inf)
    contacts, tasks = kinodyn_problem(model, problem, com_ref)
    wbc = WholeBodyController(model, contacts, mode="weighted", regularization=HESSIAN_REGULARIZATION,
                              limits=unlimited, **options)
    for task in tasks:
        wbc.add_task(task)
    return wbc


def quaternion_from_rotation_vector(r: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) of the rotation by ``|r|`` about ``r``."""
    angle = float(np.linalg.norm(r))
    axis = r / angle if angle > 0.0 else np.zeros(3)
    return np.concatenate([axis * np.sin(angle / 2.0), [np.cos(angle / 2.0)]])


def random_standing_states(n: int, rng: np.random.Generator, q0: np.ndarray | None = None,
                           joint_spread: float = 0.1, tilt: float = 0.1, speed: float = 0.3,
                           ) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n`` states near ``q0``: joints +-joint_spread rad, base +-2 cm and tilted by a rotation vector of
    entries within +-tilt rad, every velocity entry within +-speed."""
    q0 = standing_configuration() if q0 is None else q0
    states = []
    for _ in range(n):
        q = q0.copy()
        q[:3] += rng.uniform(-0.02, 0.02, 3)
        q[3:7] = quaternion_from_rotation_vector(rng.uniform(-tilt, tilt, 3))
        q[7:] += rng.uniform(-joint_spread, joint_spread, q0.size - 7)
        states.append((q, rng.uniform(-speed, speed, q0.size - 1)))
    return states


if __name__ == "__main__":
    if sys.argv[1:] != ["--serve"]:
        sys.exit("bench/tsid_quadruped.py is the TSID worker (--serve); bench/bench_wbc.py is the bench")
    serve()

"""Leg kinematics in the IMU frame and the IMU extrinsics, from the URDF (Robot Dynamics Essential, §5.3
(115)).

``ImuExtrinsics`` is the constant placement of the IMU link in the root link (``C_BI``, ``r_BI``) and the map
from the filters' IMU-frame state to the base state published as odometry, with its first-order covariance
Jacobians (docs/estimation.md, "Leg kinematics"). ``LegKinematics`` gives each foot's position in the IMU
frame from forward kinematics of the measured joints (base at identity), and its covariance: the encoder
noise pushed through the leg Jacobian, ``J_leg sigma^2 J_leg^T`` (Robot Dynamics Essential, §5.3, N_k of the
stance update). Legs are found from the tree (the joints on the path root -> foot), for any number of feet.

Rolling feet (docs/estimation.md "Rolling feet"): a spherical foot of radius ``rho`` centred at the foot
frame that rolls without slipping on the ground (normal ``n`` = world up) moves its centre at
``v_c = rho omega x n``, so the centre is not fixed in stance; the point ``c - rho (phi x n)``, ``phi`` the
world rotation vector of the foot since touchdown, is (exactly for a rotation about a fixed axis; to second
order in ``phi`` otherwise:
the exact invariant integrates ``omega``, ``Log`` of the total rotation differs from that integral by
Baker-Campbell-Hausdorff terms ``phi_1 x phi_2 / 2``). ``measure`` gives that point for the feet in stance
since an earlier touchdown (``touch_down``), from the filter's orientation and the forward kinematics' foot
orientation; the correction is a known input of the measurement (its dependence on the orientation error,
``rho |dtheta|``, is left out of H and of the covariance: 0.3 mm for 3 cm and 0.01 rad).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types

from kinodyn.estimation.filter import FootMeasurement
from kinodyn.estimation.kalman import matmul
from kinodyn.kernel import FLOAT, IN1, IN2, INT, KF, KI, OUT1, OUT2, OUT3, Kernel
from kinodyn.kernel_data import unpack
from kinodyn.kinematics.forward import walk_up
from kinodyn.model import JOINT_PRISMATIC, JOINT_REVOLUTE, Model
from kinodyn.sim.collision import ContactSphere, sphere_arrays
from kinodyn.spatial.compiled import rotation_log, rotation_to_quaternion
from kinodyn.spatial.compiled import skew as skew_into
from kinodyn.spatial.rotations import FloatArray, skew

if TYPE_CHECKING:
    from collections.abc import Sequence

ROOT_BODY = 1  # the URDF root link on the free flyer (docs/core-model-layout.md)
FREE_FLYER_NQ = 7
FREE_FLYER_NV = 6
FK_COLUMNS = 21  # feet_in_imu: position, covariance, orientation C_IF (row-major)
CENTRED = 1e-9  # m: a collision sphere this close to a foot frame's origin is centred there


def check_floating(model: Model) -> None:
    """ValueError unless ``model`` has a floating base (the estimators need the free flyer)."""
    if not model.floating_base:
        raise ValueError("the legged estimator needs the floating-base model: build it with "
                         "kd.Model.from_urdf(urdf, floating_base=True)")


def root_frame(model: Model, frame: str, role: str) -> int:
    """Index of ``frame``, which must be a link of the model; ValueError listing the links otherwise."""
    if frame not in model.frame_names:
        raise ValueError(f"{role} {frame!r} is not a link of robot {model.name!r}; links: "
                         f"{list(model.frame_names)}")
    return model.frame_id(frame)


@dataclass(frozen=True)
class BaseState:
    """The base (URDF root link) state derived from the IMU state: world ``rotation`` C_WB and ``position``,
    ``linear_velocity`` and ``angular_velocity`` in the base frame (the twist of nav_msgs/Odometry)."""

    rotation: FloatArray
    position: FloatArray
    linear_velocity: FloatArray
    angular_velocity: FloatArray


@dataclass(frozen=True)
class ImuExtrinsics:
    """Placement of the IMU link in the root link: ``rotation`` C_BI and ``translation`` r_BI (base frame).

    ``lever`` is ``u = C_BI^T r_BI``, the base-to-IMU offset in the IMU frame.
    """

    rotation: FloatArray
    translation: FloatArray
    lever: FloatArray = field(init=False)
    _lever_skew: FloatArray = field(init=False, repr=False)  # [u]x

    def __post_init__(self) -> None:
        rotation = np.array(self.rotation, dtype=np.float64)
        translation = np.array(self.translation, dtype=np.float64)
        lever = rotation.T @ translation
        for name, value in (("rotation", rotation), ("translation", translation), ("lever", lever),
                            ("_lever_skew", skew(lever))):
            object.__setattr__(self, name, value)

    @classmethod
    def from_model(cls, model: Model, imu_frame: str) -> ImuExtrinsics:
        """From the URDF: ``imu_frame`` must be a link rigidly attached to the root link (ValueError
        otherwise, listing the links)."""
        check_floating(model)
        imu = root_frame(model, imu_frame, "IMU frame")
        root_link = model.body_names[ROOT_BODY]
        root = model.frame_id(root_link)
        if model.frame_body[imu] != ROOT_BODY:
            raise ValueError(f"IMU frame {imu_frame!r} moves with joint(s) of robot {model.name!r}; it must "
                             f"be rigidly attached (fixed joints only) to the root link {root_link!r}")
        C_root = model.frame_rotation[root]
        rotation = C_root.T @ model.frame_rotation[imu]
        translation = C_root.T @ (model.frame_translation[imu] - model.frame_translation[root])
        return cls(rotation=rotation, translation=translation)

    def base_state(self, rotation: FloatArray, position: FloatArray, velocity: FloatArray,
                   angular_velocity: FloatArray) -> BaseState:
        """Base state from the IMU's ``rotation`` C_WI, world ``position`` and ``velocity`` and its
        bias-corrected ``angular_velocity`` (IMU frame): ``C_WB = C_WI C_BI^T``, ``p_B = p - C_WI u``,
        ``v_B = v + w_W x (p_B - p)``, published in the base frame (rigid-body velocity transfer)."""
        C_BI = self.rotation
        return BaseState(
            rotation=rotation @ C_BI.T,
            position=position - rotation @ self.lever,
            linear_velocity=C_BI @ (rotation.T @ velocity + self._lever_skew @ angular_velocity),
            angular_velocity=C_BI @ angular_velocity,
        )

    def base_output(self, rotation: FloatArray, position: FloatArray, velocity: FloatArray,
                    angular_velocity: FloatArray, covariance: FloatArray, gyro_variance: float) -> BaseOutput:
        """What the estimator publishes, in one compiled pass (``base_output`` kernel): ``base_state``, the
        base orientation as a quaternion and the pose and twist covariances mapped to first order from the IMU
        state's 15x15 navigation ``covariance`` and the variance of one gyro reading's white noise (all
        finite: the caller checks the filter state once per output)."""
        out = np.empty(85)
        _BASE_OUTPUT.call(rotation, position, velocity, angular_velocity, covariance, self.rotation,
                          self.lever, float(gyro_variance), out)
        out.setflags(write=False)
        return BaseOutput(*BaseOutput.parts(out))


@dataclass(frozen=True)
class BaseOutput:
    """``ImuExtrinsics.base_output``: base ``position`` and ``orientation`` (x, y, z, w) in the world,
    ``linear_velocity`` and ``angular_velocity`` in the base frame, 6x6 ``pose_covariance`` (world) and
    ``twist_covariance`` (base frame), read-only."""

    position: FloatArray
    orientation: FloatArray
    linear_velocity: FloatArray
    angular_velocity: FloatArray
    pose_covariance: FloatArray
    twist_covariance: FloatArray

    @staticmethod
    def parts(row: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray,
                                        FloatArray]:
        """The fields, in order, as views of ``row`` (85,), the layout of the ``base_output`` kernel."""
        return row[0:3], row[3:7], row[7:10], row[10:13], row[13:49].reshape(6, 6), row[49:85].reshape(6, 6)


@dataclass(frozen=True)
class Leg:
    """One foot and its leg: the joint indices (model joint order) on the path root -> foot."""

    foot: str
    joints: tuple[int, ...]


def find_leg(model: Model, foot: str) -> Leg:
    """The joints on the path from the root link to ``foot`` (ValueError if the foot is fixed to the root)."""
    body = int(model.frame_body[root_frame(model, foot, "foot")])
    joints = []
    while body > ROOT_BODY:
        if model.joint_type[body] in (JOINT_REVOLUTE, JOINT_PRISMATIC):
            joints.append(int(model.idx_q[body]) - FREE_FLYER_NQ)
        body = int(model.parent[body])
    if not joints:
        raise ValueError(f"foot {foot!r} is rigidly attached to the root link: a foot must end a leg of "
                         "joints")
    return Leg(foot=foot, joints=tuple(sorted(set(joints))))


def foot_radii(model: Model, feet: Sequence[str], spheres: Sequence[ContactSphere]) -> tuple[float, ...]:
    """Per foot, the radius of the collision sphere (``kinodyn.sim.collision_spheres`` of the URDF) centred at
    the foot frame's origin (on its body, within ``CENTRED``), else 0; ValueError if two such spheres of
    different radii are centred there, or a foot is not a link."""
    spheres = tuple(spheres)
    body, offset, radius = sphere_arrays(model, spheres)
    radii = []
    for foot in feet:
        frame = root_frame(model, foot, "foot")
        at = (body == model.frame_body[frame]) & (
            np.linalg.norm(offset - model.frame_translation[frame], axis=1) <= CENTRED)
        found = sorted(set(radius[at].tolist()))
        if len(found) > 1:
            raise ValueError(f"foot {foot!r} has collision spheres of radii {found} centred at its origin: "
                             "give foot_radius")
        radii.append(found[0] if found else 0.0)
    return tuple(radii)


def _radii(foot_radius: float | Sequence[float], feet: Sequence[str]) -> FloatArray:
    """``foot_radius`` as one read-only radius per foot; ValueError unless finite and >= 0."""
    radii = np.array(foot_radius, dtype=np.float64).reshape(-1)
    if radii.size == 1:
        radii = np.repeat(radii, len(feet))
    if radii.shape != (len(feet),) or not (np.all(np.isfinite(radii)) and np.all(radii >= 0.0)):
        raise ValueError(f"foot_radius must be one finite radius >= 0 (m) or one per foot {list(feet)}, "
                         f"got {foot_radius!r}")
    radii.setflags(write=False)
    return radii


class LegKinematics:
    """Feet in the IMU frame from the measured joint positions (Robot Dynamics Essential, §5.3 (115), r_FK in
    the IMU frame).

    ``measure(joint_positions, encoder_noise)`` returns one ``FootMeasurement`` per foot whose leg joints are
    all finite (a foot with a NaN joint on its leg is left out), in the order of ``feet``.
    ``joint_positions`` follows ``model.joint_names``. ``foot_radius`` (one for every foot, or one per foot,
    m, >= 0): the radius of spherical feet centred at the foot frames that roll on the ground (module doc);
    0 takes the foot frame as the point fixed in stance.
    """

    def __init__(self, model: Model, imu_frame: str, feet: Sequence[str],
                 foot_radius: float | Sequence[float] = 0.0) -> None:
        check_floating(model)
        if len(feet) == 0 or len(set(feet)) != len(feet):
            raise ValueError(f"feet must be a non-empty list of distinct foot links, got {list(feet)}")
        self.radii = _radii(foot_radius, feet)
        self.rolling = bool(np.any(self.radii > 0.0))
        # world orientation C_WF of each foot at its last touchdown (touch_down), for the rolling correction
        self.touchdown = np.tile(np.eye(3), (len(feet), 1, 1))
        self.model = model
        self.extrinsics = ImuExtrinsics.from_model(model, imu_frame)
        self.legs = tuple(find_leg(model, foot) for foot in feet)
        self.feet = tuple(feet)
        self.joint_count = model.nq - FREE_FLYER_NQ
        self._frames = np.array([model.frame_id(foot) for foot in self.feet], dtype=np.int64)
        self._frames.setflags(write=False)
        self._C_IB = np.ascontiguousarray(self.extrinsics.rotation.T)
        self._q = model.neutral()
        self._jacobian = np.zeros((6, model.nv))  # scratch of the kernel
        self._members = np.zeros((len(self.legs), self.joint_count), dtype=bool)  # leg k uses joint j
        for k, leg in enumerate(self.legs):
            self._members[k, list(leg.joints)] = True
        self._all = np.ones(len(self.legs), dtype=bool)

    def kernel_arrays(self) -> tuple[np.ndarray, ...]:
        """What the compiled estimator loop needs for ``measure``: the model's kernel data, the scratch
        configuration, foot frames, ``C_IB``, ``r_BI``, the scratch Jacobian, which joints each leg uses, the
        scratch output (feet x FK_COLUMNS, ``feet_in_imu``), the foot radii and the
        touchdown orientations (``touch_down``; read in place)."""
        ki, kf = self.model.kernel_data
        return (ki, kf, self._q, self._frames, self._C_IB, self.extrinsics.translation, self._jacobian,
                self._members, np.empty((len(self.legs), FK_COLUMNS)), self.radii, self.touchdown)

    def measure(self, joint_positions: FloatArray, encoder_noise: float, rotation: FloatArray | None = None,
                stance: Sequence[str] = ()) -> list[FootMeasurement]:
        """Feet in the IMU frame and their covariances ``C_BI^T J sigma^2 J^T C_BI``; see the class doc.
        ``stance``: feet in stance since their ``touch_down``, measured at the point their rolling sphere
        keeps fixed (module doc) with the IMU orientation ``rotation`` (``C_WI``; needed with ``stance``)."""
        positions = np.asarray(joint_positions, dtype=np.float64)
        if positions.shape != (self.joint_count,):
            raise ValueError(f"joint positions must have shape ({self.joint_count},) in the order of "
                             f"model.joint_names, got {positions.shape}")
        if not (np.isfinite(encoder_noise) and encoder_noise >= 0.0):
            raise ValueError(f"encoder_noise must be finite and >= 0, got {encoder_noise!r}")
        missing = ~np.isfinite(positions)
        q = self._q
        q[FREE_FLYER_NQ:] = positions
        q[FREE_FLYER_NQ:][missing] = 0.0
        out = np.empty((len(self.legs), FK_COLUMNS))
        ki, kf = self.model.kernel_data
        _FEET_IN_IMU.call(ki, kf, q, self._frames, self._C_IB, self.extrinsics.translation, FREE_FLYER_NV,
                          float(encoder_noise) ** 2, self._jacobian, out)
        if self.rolling and stance:
            if rotation is None:
                raise ValueError("measure: the rolling correction of the stance feet needs the IMU rotation")
            index = {leg.foot: k for k, leg in enumerate(self.legs)}
            _ROLL_BACK.call(np.ascontiguousarray(rotation, dtype=np.float64), out,
                            np.array([index[name] for name in stance], dtype=np.int64), self.radii,
                            self.touchdown)
        self._last = out
        out.setflags(write=False)
        complete = np.logical_not(np.any(self._members & missing, axis=1)) if missing.any() else self._all
        return [FootMeasurement.computed(leg.foot, out[k, :3], out[k, 3:12].reshape(3, 3))
                for k, leg in enumerate(self.legs) if complete[k]]

    def foot_rotations(self) -> FloatArray:
        """``C_IF`` of every foot (feet x 3 x 3) at the last ``measure``."""
        result: FloatArray = self._last[:, 12:].reshape(len(self.legs), 3, 3).copy()
        return result

    def touch_down(self, feet: Sequence[str], rotation: FloatArray) -> None:
        """Record the world orientation ``C_WF = C_WI C_IF`` (``rotation`` = ``C_WI``, ``C_IF`` of the last
        ``measure``) of the feet that touched down: the start of their rolling (module doc)."""
        index = {leg.foot: k for k, leg in enumerate(self.legs)}
        for name in feet:
            k = index[name]
            self.touchdown[k] = rotation @ self._last[k, 12:].reshape(3, 3)


# ----------------------------------------------------------------------------------------- compiled steps
@njit(cache=True)
def feet_in_imu(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, frames: np.ndarray, C_IB: np.ndarray,
                r_BI: np.ndarray, first_column: int, variance: float, J: np.ndarray, out: np.ndarray) -> None:
    """Row k of ``out`` (K x 21) = foot ``frames[k]``: its position ``C_IB (r_BF - r_BI)`` in the IMU frame,
    then the row-major 3x3 covariance ``variance * J_I J_I^T`` with ``J_I = C_IB C_BF J_local[:3, first:]``
    (the leg Jacobian of the foot origin in IMU axes over the joint columns ``first_column:``), then the
    row-major foot orientation ``C_IF = C_IB C_BF``.

    ``q`` places the base at the origin (identity orientation), so world = base coordinates; ``J`` (6 x nv)
    is scratch. ``_walk_up`` gives the foot placement ``(C_BF, d)`` and its LOCAL Jacobian.
    """
    md = unpack(ki, kf)
    nv = J.shape[1]
    M = np.empty((3, 3))
    JI = np.empty((3, nv))
    for k in range(frames.shape[0]):
        J[:, :] = 0.0
        C, d = walk_up(md, q, frames[k], True, J)
        for a in range(3):  # M = C_IB C_BF
            for b in range(3):
                M[a, b] = C_IB[a, 0] * C[b] + C_IB[a, 1] * C[3 + b] + C_IB[a, 2] * C[6 + b]
        row = out[k]
        e0, e1, e2 = d[0] - r_BI[0], d[1] - r_BI[1], d[2] - r_BI[2]
        for a in range(3):
            row[a] = C_IB[a, 0] * e0 + C_IB[a, 1] * e1 + C_IB[a, 2] * e2
            for c in range(first_column, nv):
                JI[a, c] = M[a, 0] * J[0, c] + M[a, 1] * J[1, c] + M[a, 2] * J[2, c]
        for a in range(3):
            for b in range(a, 3):
                s = 0.0
                for c in range(first_column, nv):
                    s += JI[a, c] * JI[b, c]
                row[3 + 3 * a + b] = row[3 + 3 * b + a] = variance * s
        for a in range(3):
            for b in range(3):
                row[12 + 3 * a + b] = M[a, b]


@njit(cache=True)
def roll_back(C: np.ndarray, fk: np.ndarray, feet: np.ndarray, radii: np.ndarray, touchdown: np.ndarray
              ) -> None:
    """Move each foot ``feet[k]`` (rows of ``fk``, ``feet_in_imu``) from its sphere's centre to the point
    that stays fixed while the sphere rolls: ``r -= C^T rho (phi x n)``, ``phi = Log(C C_IF touchdown^T)``
    (world rotation of the foot since ``touchdown``, its ``C_WF`` then), ``n = e_z``, ``rho = radii``;
    feet of radius 0 are left as they are. ``C`` = ``C_WI``."""
    R = np.empty((3, 3))
    for k in range(feet.shape[0]):
        f = feet[k]
        rho = radii[f]
        if rho == 0.0:
            continue
        row = fk[f]
        T = touchdown[f]
        for a in range(3):  # R = C C_IF T^T
            for b in range(3):
                s = 0.0
                for c in range(3):
                    s += (C[a, 0] * row[12 + c] + C[a, 1] * row[15 + c] + C[a, 2] * row[18 + c]) * T[b, c]
                R[a, b] = s
        phi = rotation_log(R)
        d0, d1 = rho * phi[1], -rho * phi[0]  # rho (phi x e_z), world; its z is 0
        for a in range(3):
            row[a] -= C[0, a] * d0 + C[1, a] * d1


@njit(cache=True)
def base_output(C: np.ndarray, p: np.ndarray, v: np.ndarray, w: np.ndarray, P: np.ndarray, C_BI: np.ndarray,
                u: np.ndarray, gyro_variance: float, out: np.ndarray) -> None:
    """The published base state from the IMU state (``ImuExtrinsics.base_output``), into ``out`` (85,):
    position p_B = p - C u (3), quaternion of C_WB = C C_BI^T (4), base-frame linear velocity
    C_BI (C^T v + u x w) (3) and angular velocity C_BI w (3), then the row-major 6x6 pose and twist
    covariances J P J^T (+ the gyro white noise for the twist), symmetrised. The Jacobians map the errors
    (true - estimate) ``[dp, dv, dtheta, db_a, db_g]`` (local ``dtheta``: ``C_true = C Exp(dtheta)``) and the
    gyro reading's white noise ``n_g`` to the pose ``[dp_B (world); dtheta (world axes)]`` and the twist
    ``[dv_B; dw_B]`` (base frame)."""
    CT = C.T
    ctv = np.zeros(3)  # C^T v
    a = np.zeros(3)  # C^T v + u x w
    cross = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
    for i in range(3):
        ctv[i] = CT[i, 0] * v[0] + CT[i, 1] * v[1] + CT[i, 2] * v[2]
        a[i] = ctv[i] + cross[i]
    for i in range(3):
        out[i] = p[i] - (C[i, 0] * u[0] + C[i, 1] * u[1] + C[i, 2] * u[2])
        out[7 + i] = C_BI[i, 0] * a[0] + C_BI[i, 1] * a[1] + C_BI[i, 2] * a[2]
        out[10 + i] = C_BI[i, 0] * w[0] + C_BI[i, 1] * w[1] + C_BI[i, 2] * w[2]
    rotation_to_quaternion(matmul(C, C_BI.T), out[3:7])
    U = np.empty((3, 3))
    skew_into(u, U)
    noise = np.zeros((6, 3))  # twist Jacobian of the gyro bias and of its white noise
    noise[:3] = -matmul(C_BI, U)
    noise[3:] = -C_BI
    Jp = np.zeros((6, 15))
    Jt = np.zeros((6, 15))
    Cs = matmul(C, U)
    C_BI_CT = matmul(C_BI, CT)
    S = np.empty((3, 3))
    skew_into(ctv, S)
    C_BI_sv = matmul(C_BI, S)
    for i in range(3):
        Jp[i, i] = 1.0
        for j in range(3):
            Jp[i, 6 + j] = Cs[i, j]
            Jp[3 + i, 6 + j] = C[i, j]
            Jt[i, 3 + j] = C_BI_CT[i, j]
            Jt[i, 6 + j] = C_BI_sv[i, j]
    for i in range(6):
        for j in range(3):
            Jt[i, 12 + j] = noise[i, j]
    pose = matmul(matmul(Jp, P), Jp.T)
    twist = matmul(matmul(Jt, P), Jt.T)
    gyro = matmul(noise, noise.T)
    for i in range(6):
        for j in range(6):
            out[13 + 6 * i + j] = 0.5 * (pose[i, j] + pose[j, i])
            out[49 + 6 * i + j] = 0.5 * (twist[i, j] + twist[j, i]
                                         + gyro_variance * (gyro[i, j] + gyro[j, i]))


_FEET_IN_IMU = Kernel(feet_in_imu, KI, KF, IN1, KI, IN2, IN1, INT, FLOAT, OUT2, OUT2)
_ROLL_BACK = Kernel(roll_back, IN2, OUT2, types.Array(types.int64, 1, "C"), KF, OUT3)
_BASE_OUTPUT = Kernel(base_output, IN2, IN1, IN1, IN1, IN2, IN2, IN1, FLOAT, OUT1)

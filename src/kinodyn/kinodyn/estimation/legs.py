"""Leg kinematics in the IMU frame and the IMU extrinsics, from the URDF (seed 003 §5.3 (115)).

``ImuExtrinsics`` is the constant placement of the IMU link in the root link (``C_BI``, ``r_BI``) and the map
from the filters' IMU-frame state to the base state published as odometry, with its first-order covariance
Jacobians (docs/estimation.md, "Leg kinematics"). ``LegKinematics`` gives each foot's position in the IMU
frame from forward kinematics of the measured joints (base at identity), and its covariance: the encoder
noise pushed through the leg Jacobian, ``J_leg sigma^2 J_leg^T`` (seed 003 §5.3, N_k of the stance update).
Legs are found from the tree (the joints on the path root -> foot), for any number of feet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kinodyn._kernels import legs as _legs
from kinodyn._kernels.entry import FLOAT, IN1, IN2, INT, KF, KI, OUT1, OUT2, Kernel
from kinodyn.estimation.filter import FootMeasurement
from kinodyn.model import JOINT_PRISMATIC, JOINT_REVOLUTE, Model
from kinodyn.spatial.rotations import FloatArray, skew

ROOT_BODY = 1  # the URDF root link on the free flyer (docs/core-model-layout.md)
FREE_FLYER_NQ = 7
FREE_FLYER_NV = 6


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
    _gyro_noise_map: FloatArray = field(init=False, repr=False)  # twist Jacobian of n_g, times its transpose
    _pose_map: FloatArray = field(init=False, repr=False)  # the constant blocks of output_jacobians
    _twist_map: FloatArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        rotation = np.array(self.rotation, dtype=np.float64)
        translation = np.array(self.translation, dtype=np.float64)
        lever = rotation.T @ translation
        noise = np.vstack([-rotation @ skew(lever), -rotation])
        pose = np.zeros((6, 15))
        pose[:3, :3] = np.eye(3)
        twist = np.zeros((6, 18))
        twist[:, 12:15] = twist[:, 15:18] = noise
        for name, value in (("rotation", rotation), ("translation", translation), ("lever", lever),
                            ("_lever_skew", skew(lever)), ("_gyro_noise_map", noise @ noise.T),
                            ("_pose_map", pose), ("_twist_map", twist)):
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

    def output_jacobians(self, rotation: FloatArray, velocity: FloatArray) -> tuple[FloatArray, FloatArray]:
        """First-order maps of the errors (true - estimate) to the published ones.

        Pose ``[dp_B (world); dtheta (world axes)]`` from ``[dp, dv, dtheta, db_a, db_g]`` (6x15, local
        ``dtheta``: ``C_true = C Exp(dtheta)``); twist ``[dv_B; dw_B]`` (base frame) from
        ``[dp, dv, dtheta, db_a, db_g, n_g]`` (6x18, ``n_g`` the gyro reading's white noise).
        """
        C_BI = self.rotation
        pose = self._pose_map.copy()
        pose[:3, 6:9] = rotation @ self._lever_skew
        pose[3:, 6:9] = rotation
        twist = self._twist_map.copy()
        twist[:3, 3:6] = C_BI @ rotation.T
        x, y, z = rotation.T @ velocity
        twist[:3, 6:9] = C_BI @ np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])  # C_BI [C^T v]x
        return pose, twist

    def output_covariances(self, rotation: FloatArray, velocity: FloatArray, covariance: FloatArray,
                           gyro_variance: float) -> tuple[FloatArray, FloatArray]:
        """Pose and twist covariances ``J P J^T`` (``output_jacobians``) from the 15x15 navigation
        ``covariance`` and the variance of one gyro reading's white noise, symmetrised."""
        pose_map, twist_map = self.output_jacobians(rotation, velocity)
        pose = pose_map @ covariance @ pose_map.T
        twist_nav = twist_map[:, :15]
        twist = twist_nav @ covariance @ twist_nav.T + gyro_variance * self._gyro_noise_map
        return 0.5 * (pose + pose.T), 0.5 * (twist + twist.T)

    def base_output(self, rotation: FloatArray, position: FloatArray, velocity: FloatArray,
                    angular_velocity: FloatArray, covariance: FloatArray, gyro_variance: float) -> BaseOutput:
        """What the estimator publishes, in one compiled pass: ``base_state``, the base orientation as a
        quaternion (``matrix_to_quat``) and ``output_covariances``, from the IMU state and its 15x15
        navigation ``covariance`` (all finite: the caller checks the filter state once per output)."""
        out = np.empty(85)
        _BASE_OUTPUT.call(rotation, position, velocity, angular_velocity, covariance, self.rotation,
                          self.lever, float(gyro_variance), out)
        out.setflags(write=False)
        return BaseOutput(out[0:3], out[3:7], out[7:10], out[10:13], out[13:49].reshape(6, 6),
                          out[49:85].reshape(6, 6))


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


class LegKinematics:
    """Feet in the IMU frame from the measured joint positions (seed 003 §5.3 (115), r_FK in the IMU frame).

    ``measure(joint_positions, encoder_noise)`` returns one ``FootMeasurement`` per foot whose leg joints are
    all finite (a foot with a NaN joint on its leg is left out), in the order of ``feet``.
    ``joint_positions`` follows ``model.joint_names``.
    """

    def __init__(self, model: Model, imu_frame: str, feet: Sequence[str]) -> None:
        check_floating(model)
        if len(feet) == 0 or len(set(feet)) != len(feet):
            raise ValueError(f"feet must be a non-empty list of distinct foot links, got {list(feet)}")
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
        configuration, foot frames, ``C_IB``, ``r_BI``, the scratch Jacobian, which joints each leg uses, and
        the scratch output (feet x 12, kinodyn._kernels.legs.feet_in_imu)."""
        ki, kf = self.model.kernel_data
        return (ki, kf, self._q, self._frames, self._C_IB, self.extrinsics.translation, self._jacobian,
                self._members, np.empty((len(self.legs), 12)))

    def measure(self, joint_positions: FloatArray, encoder_noise: float) -> list[FootMeasurement]:
        """Feet in the IMU frame and their covariances ``C_BI^T J sigma^2 J^T C_BI``; see the class doc."""
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
        out = np.empty((len(self.legs), 12))
        ki, kf = self.model.kernel_data
        _FEET_IN_IMU.call(ki, kf, q, self._frames, self._C_IB, self.extrinsics.translation, FREE_FLYER_NV,
                          float(encoder_noise) ** 2, self._jacobian, out)
        out.setflags(write=False)
        complete = np.logical_not(np.any(self._members & missing, axis=1)) if missing.any() else self._all
        return [FootMeasurement.computed(leg.foot, out[k, :3], out[k, 3:].reshape(3, 3))
                for k, leg in enumerate(self.legs) if complete[k]]


_FEET_IN_IMU = Kernel(_legs.feet_in_imu, KI, KF, IN1, KI, IN2, IN1, INT, FLOAT, OUT2, OUT2)
_BASE_OUTPUT = Kernel(_legs.base_output, IN2, IN1, IN1, IN1, IN2, IN2, IN1, FLOAT, OUT1)

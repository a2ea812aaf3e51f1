"""Topic and service cases against running nodes over DDS: state_publisher, kinematics (with CLIK) and
dynamics on urdf/arm7.urdf, and control_node on the quadruped (GenericSystem, namespace /quad).

Each node starts once and takes its cases in turn, while the other nodes take theirs. A topic case is
published three times, then the node's log is watched for a new warning or error line (up to ``WINDOW`` s);
every message the nodes publish meanwhile is checked (finite; control_node's efforts and CLIK's position
commands within the URDF limits). A service case is one call; its answer is classified. After each
control_node case the two command controllers are re-activated if a case deactivated them, so the next case
meets an active controller. Each node reads its own ``joint_states`` topic (remapped), so a case reaches one
node only.

A node logs a cause at most every 10 s, so the cases of a cause after its first are expected to be dropped
without a line, which only the end of a ``WINDOW`` shows. A node's topic cases therefore run grouped by
cause and topic (in their order otherwise); after the first case of a group, the rest of it, if its cause is
logged, is sent together and watched over one window: no new warning or error line means each was dropped
(every output since they were sent is held against each of them); any line, and they run again one at a
time, as the others do, once that line no longer throttles (``THROTTLE_PERIOD``). control_node's
controllers throttle by message rather than by these causes: its cases go one at a time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml
from geometry_msgs.msg import Pose, PoseStamped, Twist, Vector3, WrenchStamped
from kinodyn_common.finite import non_finite_field
from kinodyn_control.testing import QUADRUPED_JOINTS, QUADRUPED_STANCE, pd_command
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from kinodyn import Model
from kinodyn_interfaces.msg import JointPDCommand
from kinodyn_interfaces.srv import (
    ComputeFK,
    ComputeIK,
    ConfigureController,
    GravityCompensation,
    InverseDynamics,
    ListControllers,
    LoadController,
    MassMatrix,
    SwitchController,
    UnloadController,
)
from test.bad_inputs.matrix import (
    CLEAR,
    CONTROL_NODE,
    DOCUMENTED,
    REPO,
    ROS_LIB,
    Case,
    Doc,
    NodeObservation,
    Result,
    classify_node,
)
from test.ros_listener import Listener

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from numpy.typing import ArrayLike

ARM7_URDF = REPO / "urdf" / "arm7.urdf"
QUAD_URDF = REPO / "urdf" / "quadruped.urdf"
ARM7 = Model.from_urdf(str(ARM7_URDF))
JOINTS = list(ARM7.joint_names)
MID = ((ARM7.lower_limit + ARM7.upper_limit) / 2).tolist()
PD_JOINTS, EFFORT_JOINTS = list(QUADRUPED_JOINTS[:6]), list(QUADRUPED_JOINTS[6:])
QUAD_EFFORT_LIMIT = 80.0  # urdf/quadruped.urdf, every joint
NAN, INF = float("nan"), float("inf")
WINDOW = 1.5  # s a topic case waits for the node's log line (a margin for a loaded machine)
THROTTLE_PERIOD = 10.0  # s between two lines of one cause (kinodyn_common.problem_log's default period)
TOPIC, SERVICE = "topic message", "service request"
PARTIAL = Doc(
    "docs/nodes/state_publisher.md", "A joint_states message may be partial (as with robot_state_publisher)"
)


# --- messages ----------------------------------------------------------------------------------------------
def js(
    changes: dict[int, float] | None = None,
    names: list[str] | None = None,
    velocity: list[float] | None = None,
    effort: list[float] | None = None,
    position: list[float] | None = None,
    sec: int = 1,
    nanosec: int = 0,
) -> JointState:
    """An arm7 JointState at mid-range, with ``changes`` (joint index -> position) and the given fields."""
    values = list(MID)
    for i, value in (changes or {}).items():
        values[i] = value
    msg = JointState(
        name=list(JOINTS) if names is None else names,
        position=values if position is None else position,
        velocity=velocity or [],
        effort=effort or [],
    )
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    return msg


def pose(x: float = 0.3, y: float = 0.0, z: float = 0.6, q: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0)) -> Pose:
    p = Pose()
    p.position.x, p.position.y, p.position.z = x, y, z
    p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = q
    return p


def target(frame_id: str = "", **kwargs: object) -> PoseStamped:
    msg = PoseStamped(pose=pose(**kwargs))
    msg.header.frame_id = frame_id
    return msg


def odometry(frame_id: str = "odom", child: str = "", sec: int = 1, **kwargs: object) -> Odometry:
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = frame_id, child
    msg.header.stamp.sec = sec
    msg.pose.pose = pose(**{"x": 0.0, "z": 0.0, "q": (0.0, 0.0, 0.0, 1.0), **kwargs})
    return msg


def pd(changes: dict[str, list[float]] | None = None, names: list[str] | None = None) -> JointPDCommand:
    """A valid PD command for the six PD joints (stance, zero velocity and effort, kp 50, kd 2), changed."""
    fields = {
        "position": list(QUADRUPED_STANCE[:6]),
        "velocity": [0.0] * 6,
        "effort": [0.0] * 6,
        "kp": [50.0] * 6,
        "kd": [2.0] * 6,
        **(changes or {}),
    }
    return pd_command(PD_JOINTS if names is None else names, **fields)


def efforts(values: list[float]) -> Float64MultiArray:
    return Float64MultiArray(data=[float(v) for v in values])


def six(first: float, rest: float = 0.0) -> list[float]:
    return [first] + [rest] * 5


# --- the cases ---------------------------------------------------------------------------------------------
def topic(
    node: str,
    topic_name: str,
    name: str,
    given: str,
    msg: object,
    expected: str = CLEAR,
    names: tuple[str, ...] = (),
    cause: str = "",
    doc: Doc | None = None,
) -> Case:
    return Case(
        TOPIC if node != "control_node" else "control_node",
        f"{node}_{name}",
        given,
        expected,
        (node, topic_name, msg),
        names,
        doc,
        f"{node}:{cause or name}",
    )


def service(
    node: str,
    srv: str,
    name: str,
    given: str,
    request: object,
    expected: str = CLEAR,
    names: tuple[str, ...] = (),
    doc: Doc | None = None,
) -> Case:
    return Case(
        SERVICE if node != "control_node" else "control_node",
        f"{srv}_{name}",
        given,
        expected,
        (node, srv, request),
        names,
        doc,
    )


def joint_state_cases(node: str) -> list[Case]:
    """The joint_states family, for each node that reads joint states."""
    t = "joint_states"
    cases = [
        topic(
            node,
            t,
            "position_1e300",
            "joint_states: joint1 = 1e300 (finite)",
            js({0: 1e300}),
            names=("joint1", "limit"),
            cause="range",
        ),
        topic(
            node,
            t,
            "position_minus_1e300",
            "joint_states: joint4 = -1e300",
            js({3: -1e300}),
            names=("joint4", "limit"),
            cause="range",
        ),
        topic(
            node,
            t,
            "position_1p7e308",
            "joint_states: joint2 = 1.7e308",
            js({1: 1.7e308}),
            names=("joint2", "limit"),
            cause="range",
        ),
        topic(
            node,
            t,
            "position_past_limit",
            "joint_states: joint1 = upper limit + 0.5 rad",
            js({0: float(ARM7.upper_limit[0]) + 0.5}),
            names=("joint1", "limit"),
            cause="range",
        ),
        topic(
            node,
            t,
            "position_nan",
            "joint_states: joint3 = NaN",
            js({2: NAN}),
            names=("joint3", "finite"),
            cause="nan",
        ),
        topic(
            node,
            t,
            "position_inf",
            "joint_states: joint3 = inf",
            js({2: INF}),
            names=("joint3", "finite"),
            cause="nan",
        ),
        topic(
            node,
            t,
            "unknown_name",
            "joint_states: 'elbow' instead of joint7",
            js(names=[*JOINTS[:6], "elbow"]),
            names=("elbow",),
            cause="unknown",
        ),
        topic(
            node,
            t,
            "duplicate_name",
            "joint_states: joint1 twice",
            js(names=[*JOINTS[:6], "joint1"]),
            names=("joint1", "twice", "duplicate"),
            cause="duplicate",
        ),
        topic(
            node,
            t,
            "empty_name",
            "joint_states: '' instead of joint7",
            js(names=[*JOINTS[:6], ""]),
            names=("''", "empty", "unknown"),
            cause="unknown",
        ),
        topic(
            node,
            t,
            "position_short",
            "joint_states: 7 names, 6 positions",
            js(position=MID[:6]),
            names=("position",),
            cause="position_length",
        ),
        topic(
            node,
            t,
            "velocity_short",
            "joint_states: 7 names, 3 velocities",
            js(velocity=[0.0] * 3),
            names=("velocity",),
            cause="velocity_length",
        ),
        topic(
            node,
            t,
            "effort_long",
            "joint_states: 7 names, 9 efforts",
            js(effort=[0.0] * 9),
            names=("effort",),
            cause="effort_length",
        ),
        topic(
            node,
            t,
            "twenty_thousand_names",
            "joint_states: 20000 unknown names and positions",
            js(names=[f"j{i}" for i in range(20000)], position=[0.0] * 20000),
            names=("unknown", "j0"),
            cause="unknown",
        ),
    ]
    if node == "state_publisher":  # reads stamps (kinematics and dynamics take the latest state)
        cases += [
            topic(
                node,
                t,
                "stamp_negative",
                "joint_states: header.stamp.sec = -1",
                js(sec=-1),
                names=("stamp",),
                cause="stamp",
            ),
            topic(
                node,
                t,
                "nanosec_too_large",
                "joint_states: header.stamp.nanosec = 2e9",
                js(nanosec=2_000_000_000),
                names=("stamp", "nanosec"),
                cause="stamp",
            ),
        ]
        cases.append(
            topic(
                node,
                t,
                "partial",
                "joint_states: joint1 only",
                js(names=["joint1"], position=[0.1]),
                DOCUMENTED,
                doc=PARTIAL,
                cause="partial",
            )
        )
    else:
        cases.append(
            topic(
                node,
                t,
                "missing_joint",
                "joint_states: joint7 missing",
                js(names=JOINTS[:6], position=MID[:6]),
                names=("joint7", "missing"),
                cause="missing",
            )
        )
    return cases


def state_publisher_odometry_cases() -> list[Case]:
    t, n = "odom", "state_publisher"
    return [
        topic(n, t, "odom_nan", "odometry: x = NaN", odometry(x=NAN), names=("finite", "pose")),
        topic(
            n, t, "odom_1e300", "odometry: x = 1e300", odometry(x=1e300), names=("1e9", "translation", "pose")
        ),
        topic(
            n,
            t,
            "odom_zero_quaternion",
            "odometry: quaternion (0, 0, 0, 0)",
            odometry(q=(0.0, 0.0, 0.0, 0.0)),
            names=("quaternion",),
            cause="quaternion",
        ),
        topic(
            n,
            t,
            "odom_non_unit_quaternion",
            "odometry: quaternion (0, 0, 0, 2)",
            odometry(q=(0.0, 0.0, 0.0, 2.0)),
            names=("quaternion", "unit"),
            cause="quaternion",
        ),
        topic(
            n,
            t,
            "odom_empty_frame",
            "odometry: header.frame_id ''",
            odometry(frame_id=""),
            names=("frame_id",),
        ),
        topic(
            n,
            t,
            "odom_wrong_child",
            "odometry: child_frame_id 'base_footprint'",
            odometry(child="base_footprint"),
            names=("child_frame_id", "base_footprint"),
        ),
        topic(
            n, t, "odom_stamp_negative", "odometry: header.stamp.sec = -5", odometry(sec=-5), names=("stamp",)
        ),
    ]


def kinematics_target_cases() -> list[Case]:
    t, n = "target_pose", "kinematics"
    return [
        topic(
            n,
            t,
            "target_x_1e300",
            "CLIK target at x = 1e300 (finite)",
            target(x=1e300),
            names=("reach", "1e9", "target"),
            cause="far",
        ),
        topic(
            n,
            t,
            "target_x_50m",
            "CLIK target at x = 50 m (the arm reaches ~1.2 m)",
            target(x=50.0),
            names=("reach", "target"),
            cause="far",
        ),
        topic(n, t, "target_nan", "CLIK target at y = NaN", target(y=NAN), names=("finite",), cause="nan"),
        topic(n, t, "target_inf", "CLIK target at z = -inf", target(z=-INF), names=("finite",), cause="nan"),
        topic(
            n,
            t,
            "target_zero_quaternion",
            "CLIK target quaternion (0, 0, 0, 0)",
            target(q=(0.0, 0.0, 0.0, 0.0)),
            names=("quaternion",),
            cause="quaternion",
        ),
        topic(
            n,
            t,
            "target_non_unit_quaternion",
            "CLIK target quaternion (0.5, 0.5, 0.5, 0.5000001 x 2)",
            target(q=(1.0, 1.0, 1.0, 1.0)),
            names=("quaternion", "unit"),
            cause="quaternion",
        ),
        topic(
            n, t, "target_other_frame", "CLIK target in frame 'map'", target("map"), names=("map", "frame")
        ),
    ]


def control_command_cases() -> list[Case]:
    n, p, e = "control_node", "leg_pd_controller/commands", "leg_effort_controller/commands"
    return [
        topic(
            n,
            p,
            "pd_gains_1p7e308",
            "JointPDCommand kp = kd = 1.7e308 (finite, in-limit targets)",
            pd({"kp": [1.7e308] * 6, "kd": [1.7e308] * 6}),
            names=("kp", "max_kp", "kd"),
            cause="max_kp",
        ),
        topic(
            n,
            p,
            "pd_kp_1e300",
            "JointPDCommand kp = 1e300 on one joint",
            pd({"kp": six(1e300, 50.0)}),
            names=("kp",),
            cause="max_kp",
        ),
        topic(
            n,
            p,
            "pd_kd_1e12",
            "JointPDCommand kd = 1e12",
            pd({"kd": six(1e12, 2.0)}),
            names=("kd",),
            cause="max_kd",
        ),
        topic(
            n,
            p,
            "pd_kp_negative",
            "JointPDCommand kp = -1",
            pd({"kp": six(-1.0, 50.0)}),
            names=("kp",),
            cause="negative_kp",
        ),
        topic(
            n,
            p,
            "pd_kp_nan",
            "JointPDCommand kp = NaN",
            pd({"kp": six(NAN, 50.0)}),
            names=("kp", "finite"),
            cause="nan",
        ),
        topic(
            n,
            p,
            "pd_position_nan",
            "JointPDCommand position = NaN",
            pd({"position": six(NAN)}),
            names=("position", "finite", "nan"),
            cause="nan",
        ),
        topic(
            n,
            p,
            "pd_velocity_inf",
            "JointPDCommand velocity = inf",
            pd({"velocity": six(INF)}),
            names=("velocity", "finite", "inf"),
            cause="nan",
        ),
        topic(
            n,
            p,
            "pd_position_beyond_limit",
            "JointPDCommand position 3 rad (limit 0.8)",
            pd({"position": six(3.0)}),
            names=("position", "limit", "LF_HAA"),
            cause="position_limit",
        ),
        topic(
            n,
            p,
            "pd_velocity_beyond_limit",
            "JointPDCommand velocity 100 rad/s (limit 8)",
            pd({"velocity": six(100.0)}),
            names=("velocity", "limit"),
            cause="velocity_limit",
        ),
        topic(
            n,
            p,
            "pd_effort_1e6",
            "JointPDCommand feed-forward effort 1e6 N m (limit 80)",
            pd({"effort": six(1e6)}),
            names=("effort", "limit"),
            cause="effort_limit",
        ),
        topic(
            n,
            p,
            "pd_unknown_joint",
            "JointPDCommand names 'LF_KNEE'",
            pd(names=[*PD_JOINTS[:5], "LF_KNEE"]),
            names=("LF_KNEE",),
            cause="unknown",
        ),
        topic(
            n,
            p,
            "pd_duplicate_joint",
            "JointPDCommand names LF_HAA twice",
            pd(names=[*PD_JOINTS[:5], "LF_HAA"]),
            names=("LF_HAA",),
            cause="duplicate",
        ),
        topic(
            n,
            p,
            "pd_missing_joint",
            "JointPDCommand with 5 of its 6 joints",
            pd({k: v[:5] for k, v in pd_fields().items()}, names=PD_JOINTS[:5]),
            names=("missing", "LH_KFE"),
            cause="missing",
        ),
        topic(
            n,
            p,
            "pd_kd_short",
            "JointPDCommand with 4 kd values for 6 joints",
            pd({"kd": [2.0] * 4}),
            names=("kd", "size", "length"),
            cause="length",
        ),
        topic(
            n,
            p,
            "pd_empty",
            "JointPDCommand with no names and no values",
            pd({k: [] for k in pd_fields()}, names=[]),
            names=("missing", "empty", "joint"),
            cause="empty",
        ),
        topic(
            n,
            e,
            "effort_size_3",
            "Float64MultiArray of 3 efforts for 6 joints",
            efforts([0.0] * 3),
            names=("size", "3"),
            cause="size",
        ),
        topic(
            n,
            e,
            "effort_empty",
            "Float64MultiArray with no data",
            efforts([]),
            names=("size", "0"),
            cause="size",
        ),
        topic(
            n,
            e,
            "effort_nan",
            "Float64MultiArray effort NaN",
            efforts(six(NAN)),
            names=("finite", "nan"),
            cause="nan",
        ),
        topic(
            n,
            e,
            "effort_minus_inf",
            "Float64MultiArray effort -inf",
            efforts(six(-INF)),
            names=("finite", "inf"),
            cause="nan",
        ),
        topic(
            n,
            e,
            "effort_1e6",
            "Float64MultiArray effort 1e6 N m (limit 80)",
            efforts(six(1e6)),
            names=("limit", "effort"),
            cause="limit",
        ),
        topic(
            n,
            e,
            "effort_1p7e308",
            "Float64MultiArray effort 1.7e308",
            efforts(six(1.7e308)),
            names=("limit", "effort"),
            cause="limit",
        ),
    ]


def pd_fields() -> dict[str, list[float]]:
    return {
        "position": list(QUADRUPED_STANCE[:6]),
        "velocity": [0.0] * 6,
        "effort": [0.0] * 6,
        "kp": [50.0] * 6,
        "kd": [2.0] * 6,
    }


def fk(
    changes: dict[int, float] | None = None, frames: tuple[str, ...] = ("ee_link",), **kwargs: object
) -> ComputeFK.Request:
    return ComputeFK.Request(joint_state=js(changes, **kwargs), frames=list(frames))


def ik(
    frame: str = "ee_link", tgt: PoseStamped | None = None, seed: JointState | None = None, **kwargs: object
) -> ComputeIK.Request:
    return ComputeIK.Request(frame=frame, target=tgt or target(), seed=seed or JointState(), **kwargs)


def inverse_dynamics(
    changes: dict[int, float] | None = None,
    velocity: list[float] | None = None,
    acceleration: list[float] | None = None,
    wrench: WrenchStamped | None = None,
    **kwargs: object,
) -> InverseDynamics.Request:
    return InverseDynamics.Request(
        joint_state=js(changes, velocity=velocity),
        acceleration=acceleration or [],
        external_wrenches=[wrench] if wrench else [],
        **kwargs,
    )


def wrench(link: str = "link4", force: float = 1.0) -> WrenchStamped:
    msg = WrenchStamped()
    msg.header.frame_id = link
    msg.wrench.force.x = force
    return msg


def kinematics_service_cases() -> list[Case]:
    k, f, i = "kinematics", "compute_fk", "compute_ik"
    return [
        service(
            k, f, "position_1e300", "compute_fk: joint1 = 1e300", fk({0: 1e300}), names=("joint1", "limit")
        ),
        service(k, f, "position_nan", "compute_fk: joint2 = NaN", fk({1: NAN}), names=("joint2", "finite")),
        service(
            k, f, "unknown_frame", "compute_fk: frame 'ee_lnk'", fk(frames=("ee_lnk",)), names=("ee_lnk",)
        ),
        service(k, f, "no_frames", "compute_fk: frames = []", fk(frames=()), names=("frame",)),
        service(
            k,
            f,
            "missing_joint",
            "compute_fk: joint7 missing",
            fk(names=JOINTS[:6], position=MID[:6]),
            names=("joint7", "missing"),
        ),
        service(
            k,
            f,
            "unknown_joint",
            "compute_fk: 'elbow' for joint7",
            fk(names=[*JOINTS[:6], "elbow"]),
            names=("elbow",),
        ),
        service(
            k,
            f,
            "position_short",
            "compute_fk: 7 names, 2 positions",
            fk(position=[0.0, 0.0]),
            names=("position",),
        ),
        service(
            k,
            f,
            "base_pose_on_fixed_base",
            "compute_fk: base_pose x = 1 on a fixed-base node",
            ComputeFK.Request(
                joint_state=js(), frames=["ee_link"], base_pose=pose(x=1.0, z=0.0, q=(0.0, 0.0, 0.0, 1.0))
            ),
            names=("base_pose", "fixed"),
        ),
        service(
            k,
            i,
            "target_x_1e300",
            "compute_ik: target at x = 1e300",
            ik(tgt=target(x=1e300)),
            names=("target", "reach", "translation"),
        ),
        service(k, i, "target_nan", "compute_ik: target y = NaN", ik(tgt=target(y=NAN)), names=("finite",)),
        service(
            k,
            i,
            "target_zero_quaternion",
            "compute_ik: target quaternion (0, 0, 0, 0)",
            ik(tgt=target(q=(0.0, 0.0, 0.0, 0.0))),
            names=("quaternion",),
        ),
        service(
            k,
            i,
            "target_other_frame",
            "compute_ik: target in frame 'map'",
            ik(tgt=target("map")),
            names=("map", "frame"),
        ),
        service(k, i, "unknown_frame", "compute_ik: frame 'ee_lnk'", ik("ee_lnk"), names=("ee_lnk",)),
        service(
            k,
            i,
            "tolerance_negative",
            "compute_ik: position_tolerance = -1",
            ik(position_tolerance=-1.0),
            names=("tolerance",),
        ),
        service(
            k,
            i,
            "tolerance_nan",
            "compute_ik: orientation_tolerance = NaN",
            ik(orientation_tolerance=NAN),
            names=("tolerance",),
        ),
        service(k, i, "timeout_negative", "compute_ik: timeout = -1", ik(timeout=-1.0), names=("timeout",)),
        service(k, i, "timeout_inf", "compute_ik: timeout = inf", ik(timeout=INF), names=("timeout",)),
        service(
            k, i, "seed_nan", "compute_ik: seed joint1 = NaN", ik(seed=js({0: NAN})), names=("seed", "finite")
        ),
        service(
            k,
            i,
            "seed_1e300",
            "compute_ik: seed joint1 = 1e300",
            ik(seed=js({0: 1e300})),
            names=("seed", "joint1", "limit"),
        ),
        service(
            k,
            i,
            "seed_unknown_joint",
            "compute_ik: seed names 'elbow'",
            ik(seed=js(names=[*JOINTS[:6], "elbow"])),
            names=("elbow",),
        ),
    ]


def dynamics_service_cases() -> list[Case]:
    d, ivd, g, mm = "dynamics", "inverse_dynamics", "gravity_compensation", "mass_matrix"
    return [
        service(
            d,
            ivd,
            "velocity_1e200",
            "inverse_dynamics: velocity 1e200 on joint1",
            inverse_dynamics(velocity=[1e200] + [0.0] * 6),
            names=("velocity",),
        ),
        service(
            d,
            ivd,
            "velocity_nan",
            "inverse_dynamics: velocity NaN",
            inverse_dynamics(velocity=[NAN] * 7),
            names=("velocity", "finite"),
        ),
        service(
            d,
            ivd,
            "acceleration_1e300",
            "inverse_dynamics: acceleration 1e300",
            inverse_dynamics(acceleration=[1e300] + [0.0] * 6),
            names=("acceleration",),
        ),
        service(
            d,
            ivd,
            "acceleration_short",
            "inverse_dynamics: 3 accelerations for 7 joints",
            inverse_dynamics(acceleration=[0.0] * 3),
            names=("acceleration",),
        ),
        service(
            d,
            ivd,
            "velocity_short",
            "inverse_dynamics: 2 velocities for 7 joints",
            inverse_dynamics(velocity=[0.0] * 2),
            names=("velocity",),
        ),
        service(
            d,
            ivd,
            "wrench_nan",
            "inverse_dynamics: wrench force NaN",
            inverse_dynamics(wrench=wrench(force=NAN)),
            names=("wrench", "finite"),
        ),
        service(
            d,
            ivd,
            "wrench_1e300",
            "inverse_dynamics: wrench force 1e300",
            inverse_dynamics(wrench=wrench(force=1e300)),
            names=("wrench",),
        ),
        service(
            d,
            ivd,
            "wrench_unknown_link",
            "inverse_dynamics: wrench on 'link42'",
            inverse_dynamics(wrench=wrench("link42")),
            names=("link42",),
        ),
        service(
            d,
            ivd,
            "wrench_empty_frame",
            "inverse_dynamics: wrench with header.frame_id ''",
            inverse_dynamics(wrench=wrench("")),
            names=("frame", "link", "''"),
        ),
        service(
            d,
            ivd,
            "position_1e300",
            "inverse_dynamics: joint1 = 1e300",
            inverse_dynamics({0: 1e300}),
            names=("joint1", "limit"),
        ),
        service(
            d,
            ivd,
            "base_twist_on_fixed_base",
            "inverse_dynamics: base_twist 1 m/s on a fixed base",
            inverse_dynamics(base_twist=Twist(linear=Vector3(x=1.0))),
            names=("base_twist", "fixed"),
        ),
        service(
            d,
            g,
            "position_nan",
            "gravity_compensation: joint5 = NaN",
            GravityCompensation.Request(joint_state=js({4: NAN})),
            names=("joint5", "finite"),
        ),
        service(
            d,
            g,
            "position_1e300",
            "gravity_compensation: joint5 = 1e300",
            GravityCompensation.Request(joint_state=js({4: 1e300})),
            names=("joint5", "limit"),
        ),
        service(
            d,
            g,
            "empty_joint_state",
            "gravity_compensation: empty JointState",
            GravityCompensation.Request(joint_state=JointState()),
            names=("missing", "joint"),
        ),
        service(
            d,
            g,
            "unknown_joint",
            "gravity_compensation: 'elbow'",
            GravityCompensation.Request(joint_state=js(names=[*JOINTS[:6], "elbow"])),
            names=("elbow",),
        ),
        service(
            d,
            mm,
            "position_inf",
            "mass_matrix: joint2 = inf",
            MassMatrix.Request(joint_state=js({1: INF})),
            names=("joint2", "finite"),
        ),
        service(
            d,
            mm,
            "duplicate_joint",
            "mass_matrix: joint1 twice",
            MassMatrix.Request(joint_state=js(names=[*JOINTS[:6], "joint1"])),
            names=("joint1",),
        ),
        service(
            d,
            mm,
            "position_minus_1e300",
            "mass_matrix: joint6 = -1e300",
            MassMatrix.Request(joint_state=js({5: -1e300})),
            names=("joint6", "limit"),
        ),
    ]


def control_service_cases() -> list[Case]:
    c = "control_node"
    return [
        service(
            c,
            "load_controller",
            "unknown",
            "load_controller 'no_such_controller' (no type parameter)",
            LoadController.Request(name="no_such_controller"),
            names=("no_such_controller",),
        ),
        service(
            c,
            "load_controller",
            "already_loaded",
            "load_controller 'leg_pd_controller' (loaded)",
            LoadController.Request(name="leg_pd_controller"),
            names=("leg_pd_controller",),
        ),
        service(
            c,
            "load_controller",
            "empty_name",
            "load_controller ''",
            LoadController.Request(name=""),
            names=("name", "''"),
        ),
        service(
            c,
            "configure_controller",
            "unknown",
            "configure_controller 'ghost'",
            ConfigureController.Request(name="ghost"),
            names=("ghost",),
        ),
        service(
            c,
            "configure_controller",
            "active",
            "configure_controller 'leg_pd_controller' (active)",
            ConfigureController.Request(name="leg_pd_controller"),
            names=("leg_pd_controller", "active"),
        ),
        service(
            c,
            "unload_controller",
            "active",
            "unload_controller 'leg_pd_controller' (active)",
            UnloadController.Request(name="leg_pd_controller"),
            names=("leg_pd_controller", "active"),
        ),
        service(
            c,
            "unload_controller",
            "unknown",
            "unload_controller 'ghost'",
            UnloadController.Request(name="ghost"),
            names=("ghost",),
        ),
        service(
            c,
            "switch_controller",
            "unknown",
            "switch_controller activate ['ghost'] STRICT",
            SwitchController.Request(activate_controllers=["ghost"], strictness=2),
            names=("ghost",),
        ),
        service(
            c,
            "switch_controller",
            "strictness_7",
            "switch_controller strictness = 7",
            SwitchController.Request(activate_controllers=["spare_pd"], strictness=7),
            names=("strictness",),
        ),
        service(
            c,
            "switch_controller",
            "timeout_nan",
            "switch_controller spare_pd for leg_pd_controller, timeout = NaN",
            SwitchController.Request(
                activate_controllers=["spare_pd"],
                deactivate_controllers=["leg_pd_controller"],
                strictness=2,
                timeout=NAN,
            ),
            names=("timeout",),
        ),
        service(
            c,
            "switch_controller",
            "timeout_negative",
            "switch_controller spare_pd for leg_pd_controller, timeout = -1",
            SwitchController.Request(
                activate_controllers=["spare_pd"],
                deactivate_controllers=["leg_pd_controller"],
                strictness=2,
                timeout=-1.0,
            ),
            names=("timeout",),
        ),
        service(
            c,
            "switch_controller",
            "claim_conflict",
            "switch_controller activate 'spare_pd' (claims the PD joints) STRICT",
            SwitchController.Request(activate_controllers=["spare_pd"], strictness=2),
            names=("spare_pd", "claimed"),
        ),
        service(
            c,
            "switch_controller",
            "activate_and_deactivate_same",
            "switch_controller activate and deactivate 'leg_pd_controller' at once, STRICT",
            SwitchController.Request(
                activate_controllers=["leg_pd_controller"],
                deactivate_controllers=["leg_pd_controller"],
                strictness=2,
            ),
            names=("leg_pd_controller",),
        ),
    ]


def node_cases() -> list[Case]:
    return [
        *joint_state_cases("state_publisher"),
        *state_publisher_odometry_cases(),
        *joint_state_cases("kinematics"),
        *kinematics_target_cases(),
        *joint_state_cases("dynamics"),
        *kinematics_service_cases(),
        *dynamics_service_cases(),
        *control_command_cases(),
        *control_service_cases(),
    ]


# --- the graph ---------------------------------------------------------------------------------------------
SERVICES = {
    "compute_fk": (ComputeFK, "/kinematics/compute_fk"),
    "compute_ik": (ComputeIK, "/kinematics/compute_ik"),
    "inverse_dynamics": (InverseDynamics, "/dynamics/inverse_dynamics"),
    "gravity_compensation": (GravityCompensation, "/dynamics/gravity_compensation"),
    "mass_matrix": (MassMatrix, "/dynamics/mass_matrix"),
    **{
        name: (srv, f"/quad/controller_manager/{name}")
        for name, srv in (
            ("load_controller", LoadController),
            ("configure_controller", ConfigureController),
            ("unload_controller", UnloadController),
            ("switch_controller", SwitchController),
            ("list_controllers", ListControllers),
        )
    },
}
TOPICS = {  # (node, topic key) -> (type, topic, QoS)
    ("state_publisher", "joint_states"): (JointState, "/sp/joint_states", qos_profile_sensor_data),
    ("state_publisher", "odom"): (Odometry, "/sp/odom", qos_profile_sensor_data),
    ("kinematics", "joint_states"): (JointState, "/kin/joint_states", qos_profile_sensor_data),
    ("kinematics", "target_pose"): (PoseStamped, "/kinematics/target_pose", QoSProfile(depth=10)),
    ("dynamics", "joint_states"): (JointState, "/dyn/joint_states", qos_profile_sensor_data),
    ("control_node", "leg_pd_controller/commands"): (
        JointPDCommand,
        "/quad/leg_pd_controller/commands",
        QoSProfile(depth=10),
    ),
    ("control_node", "leg_effort_controller/commands"): (
        Float64MultiArray,
        "/quad/leg_effort_controller/commands",
        QoSProfile(depth=10),
    ),
}
OUTPUTS = {
    "/kinematics/joint_commands": Float64MultiArray,
    "/dynamics/gravity_efforts": Float64MultiArray,
    "/quad/joint_states": JointState,
}
COMMAND_CONTROLLERS = ("leg_pd_controller", "leg_effort_controller")


def start_graph(spawn: Callable[..., Any], tmp_path: Path) -> dict[str, Any]:
    """The four node processes (see the module doc); returns name -> Popen (with ``log_path``)."""
    arm = ["-p", f"robot_description_file:={ARM7_URDF}"]
    watchdog = {"watchdog_timeout": 1e6}  # no watchdog line while cases are refused
    params = {
        "update_rate": 100,
        "robot_description_file": str(QUAD_URDF),
        "joint_state_broadcaster": {"type": "kinodyn_control/JointStateBroadcaster"},
        "leg_pd_controller": {"type": "kinodyn_control/JointPDController", "joints": PD_JOINTS, **watchdog},
        "leg_effort_controller": {
            "type": "kinodyn_control/ForwardCommandController",
            "joints": EFFORT_JOINTS,
            "interface_name": "effort",
            **watchdog,
        },
        "spare_pd": {"type": "kinodyn_control/JointPDController", "joints": list(PD_JOINTS), **watchdog},
        "inactive_controllers": ["spare_pd"],
    }
    param_file = tmp_path / "bad_inputs_control.yaml"
    param_file.write_text(yaml.safe_dump({"/**": {"ros__parameters": params}}))
    return {
        "state_publisher": spawn(
            [
                str(ROS_LIB / "state_publisher"),
                "--ros-args",
                *arm,
                "-p",
                "odometry_topic:=odom",
                "-p",
                "ignore_timestamp:=true",
                "-r",
                "joint_states:=/sp/joint_states",
                "-r",
                "odom:=/sp/odom",
            ],
            "bad_inputs_state_publisher",
        ),
        "kinematics": spawn(
            [
                str(ROS_LIB / "kinematics"),
                "--ros-args",
                *arm,
                "-p",
                "ik_frame:=ee_link",
                "-p",
                "ik_timeout:=0.3",
                "-r",
                "joint_states:=/kin/joint_states",
            ],
            "bad_inputs_kinematics",
        ),
        "dynamics": spawn(
            [
                str(ROS_LIB / "dynamics"),
                "--ros-args",
                *arm,
                "-p",
                "publish_gravity:=true",
                "-r",
                "joint_states:=/dyn/joint_states",
            ],
            "bad_inputs_dynamics",
        ),
        "control_node": spawn(
            [str(CONTROL_NODE), "--ros-args", "-r", "__ns:=/quad", "--params-file", str(param_file)],
            "bad_inputs_control_node",
        ),
    }


@dataclass
class Session:
    """The test process's side: publishers, clients, and every output message with its arrival time."""

    processes: dict[str, Any]
    listener: Listener
    publishers: dict[tuple[str, str], Any] = field(default_factory=dict)
    clients: dict[str, Any] = field(default_factory=dict)
    outputs: list[tuple[float, str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        node = self.listener.node
        self.publishers = {key: node.create_publisher(t, name, qos) for key, (t, name, qos) in TOPICS.items()}
        self.clients = {key: node.create_client(t, name) for key, (t, name) in SERVICES.items()}
        for name, msg_type in OUTPUTS.items():
            node.create_subscription(
                msg_type,
                name,
                lambda m, n=name: self.outputs.append((time.monotonic(), n, m)),
                QoSProfile(depth=100),
            )

    def log(self, node: str) -> str:
        return Path(self.processes[node].log_path).read_text(errors="replace")

    def ready(self, timeout: float = 90.0) -> None:
        for client in self.clients.values():
            dead = {n: self.log(n)[-800:] for n, p in self.processes.items() if p.poll() is not None}
            assert client.wait_for_service(timeout_sec=timeout), (
                f"{client.srv_name} not available; dead: {dead}"
            )
        for (node, _), publisher in self.publishers.items():
            assert self.listener.spin_until(lambda p=publisher: p.get_subscription_count() > 0, timeout), node
        # a valid CLIK target and joint state, so commands flow before the target cases; sent again every
        # 0.2 s until they do (a best-effort joint state can be lost while discovery completes)
        deadline = time.monotonic() + 30.0
        while not any(n == "/kinematics/joint_commands" for _, n, _ in self.outputs):
            assert time.monotonic() < deadline, "no CLIK command: " + self.log("kinematics")
            self.publishers[("kinematics", "target_pose")].publish(target())
            self.publishers[("kinematics", "joint_states")].publish(js())
            self.listener.spin_for(0.2)

    def call(self, srv: str, request: Any, timeout: float = 20.0) -> Any:  # noqa: ANN401  (rclpy types no request or response per service)
        future = self.clients[srv].call_async(request)
        return future.result() if self.listener.spin_until(future.done, timeout) else None

    def reactivate(self) -> None:
        """Bring the command controllers back to active (and spare_pd to inactive) if a case changed them."""
        states = {
            c.name: c.state for c in self.call("list_controllers", ListControllers.Request()).controller
        }
        inactive = [name for name in COMMAND_CONTROLLERS if states.get(name) != "active"]
        spare = ["spare_pd"] if states.get("spare_pd") == "active" else []
        if inactive or spare:
            request = SwitchController.Request(
                activate_controllers=inactive, deactivate_controllers=spare, strictness=2
            )
            assert self.call("switch_controller", request).ok, f"cannot restore the controllers: {states}"

    def bad_outputs(self, since: float) -> tuple[list[str], list[str]]:
        non_finite, wrong = [], []
        for t, topic_name, msg in self.outputs:
            if t < since:
                continue
            if (where := non_finite_field(msg)) is not None:
                non_finite.append(f"{topic_name}: {where} not finite")
            elif topic_name == "/quad/joint_states" and np.any(np.abs(msg.effort) > QUAD_EFFORT_LIMIT + 1e-9):
                wrong.append(f"{topic_name}: effort {max(np.abs(msg.effort)):.3g} beyond the limit")
            elif topic_name == "/kinematics/joint_commands" and not _within_arm7_limits(msg.data):
                wrong.append(f"{topic_name}: a position command outside the URDF limits: {list(msg.data)}")
        return non_finite, wrong

    def start(self, cases: list[Case]) -> Pending:
        """Send ``cases`` (one service case, or topic cases of one node): the call, or each topic case's first
        of three messages."""
        node, key, payload = cases[0].payload
        pending = Pending(cases, time.monotonic(), len(self.log(node)))
        if is_service(cases[0]):
            pending.call = self.clients[key].call_async(payload)
            pending.deadline = pending.started + 20.0
        else:
            self._publish(cases)
            pending.published = 1
        return pending

    def _publish(self, cases: list[Case]) -> None:
        for node, key, payload in (case.payload for case in cases):
            self.publishers[(node, key)].publish(payload)

    def advance(self, pending: Pending) -> bool:
        """One step of a sent case: the topic's second and third message 0.05 s apart, then its node's log
        watched for a new warning or error line up to ``WINDOW`` s (a service: its answer, up to 20 s), then
        0.1 s for the outputs to arrive; true once it can be classified."""
        now = time.monotonic()
        node = pending.cases[0].payload[0]
        if pending.settled is not None:
            return now >= pending.settled + 0.1
        if pending.call is not None:
            done = pending.call.done() or now > pending.deadline
        elif pending.published < 3:
            if now >= pending.started + 0.05 * pending.published:
                self._publish(pending.cases)
                pending.published += 1
                pending.deadline = now + 0.05 + WINDOW
            return False
        else:
            new = self.log(node)[pending.offset:]
            done = "[WARN]" in new or "[ERROR]" in new or now > pending.deadline
        if done:
            pending.settled = now
        return False

    def finish(self, pending: Pending, causes: set[str]) -> list[Result] | None:
        """Classify settled cases from the answer, their node's new log lines and every output message since
        they were sent (any node's); re-activate control_node's command controllers after its cases. None for
        a group of cases whose node logged a warning or error line meanwhile (it cannot tell whose)."""
        node = pending.cases[0].payload[0]
        new_log = self.log(node)[pending.offset:]
        if len(pending.cases) > 1 and ("[WARN]" in new_log or "[ERROR]" in new_log):
            if node == "control_node" and self.processes[node].poll() is None:
                self.reactivate()
            return None
        answered, reply = True, None
        if pending.call is not None:
            answer = pending.call.result() if pending.call.done() else None
            answered = answer is not None
            if answer is not None:
                ok = answer.success if hasattr(answer, "success") else answer.ok
                reply = (ok, answer.message, _answer_values(answer))
        non_finite, wrong = self.bad_outputs(pending.started)
        alive = self.processes[node].poll() is None
        seen = NodeObservation(alive, new_log, non_finite, wrong, reply, answered)
        results = [Result(case, classify_node(case, seen, causes)) for case in pending.cases]
        if node == "control_node" and seen.alive:
            self.reactivate()
        return results


@dataclass
class Pending:
    """Cases sent to their node (one, or a group of a logged cause) and not yet classified."""

    cases: list[Case]
    started: float
    offset: int  # the length of the node's log when the cases were sent
    call: Any = None  # a service case's future
    published: int = 0  # a topic case's messages sent so far
    deadline: float = 0.0  # of the answer, or of the log line once the third message is out
    settled: float | None = None  # when the answer or the log line came, or the deadline passed


def _within_arm7_limits(command: ArrayLike) -> bool:
    """CLIK's position commands: one per arm7 joint, each within its URDF limits."""
    q = np.asarray(command, dtype=float)
    return q.shape == (len(JOINTS),) and bool(np.all((q >= ARM7.lower_limit) & (q <= ARM7.upper_limit)))


def _answer_values(answer: Any) -> dict[str, Any]:  # noqa: ANN401  (the response of any kinodyn service)
    """The numbers of a service answer (efforts, poses, matrix, solution, errors)."""
    values = {}
    for name in ("effort", "position_error", "orientation_error"):
        if hasattr(answer, name):
            values[name] = np.asarray(getattr(answer, name), dtype=float)
    if hasattr(answer, "mass_matrix"):
        values["mass_matrix"] = np.asarray(answer.mass_matrix.data, dtype=float)
    if hasattr(answer, "solution"):
        values["solution"] = np.asarray(answer.solution.position, dtype=float)
    if hasattr(answer, "poses"):
        values["poses"] = np.array(
            [
                [
                    p.pose.position.x,
                    p.pose.position.y,
                    p.pose.position.z,
                    p.pose.orientation.x,
                    p.pose.orientation.y,
                    p.pose.orientation.z,
                    p.pose.orientation.w,
                ]
                for p in answer.poses
            ],
            dtype=float,
        )
    return values


def is_service(case: Case) -> bool:
    return case.surface == SERVICE or case.payload[1] in SERVICES


def by_cause(cases: list[Case]) -> list[Case]:
    """``cases`` (one node's) with each topic case moved up behind the earlier cases of its cause on its
    topic (control_node's stay in their order)."""
    first: dict[tuple[str, str], int] = {}
    keys = [first.setdefault((c.cause, c.payload[1]), k) if c.surface == TOPIC else k
            for k, c in enumerate(cases)]
    return [cases[k] for k in sorted(range(len(cases)), key=keys.__getitem__)]


def next_cases(
    queue: list[Case], causes: set[str], alone: set[str], sent: set[tuple[str, str]]
) -> list[Case]:
    """Take the head of ``queue``; after the first case of a cause on a topic (``sent`` holds those), the
    following cases of that cause on that topic too, if the cause is logged (they are sent together, see the
    module doc). A case in ``alone`` goes by itself."""
    head = queue.pop(0)
    group, key = [head], (head.cause, head.payload[1])
    if head.surface != TOPIC or key not in sent or head.cause not in causes or head.name in alone:
        sent.add(key)
        return group
    while (queue and queue[0].surface == TOPIC and queue[0].name not in alone
           and (queue[0].cause, queue[0].payload[1]) == key):
        group.append(queue.pop(0))
    return group


def run_node_cases(spawn: Callable[..., Any], tmp_path: Path) -> Iterator[Result]:
    """Start the graph, send every case (each node takes its cases in turn, grouped as the module doc says,
    while the other nodes take theirs), yield each result; the caller's ``spawn`` stops the processes."""
    processes = start_graph(spawn, tmp_path)
    listener = Listener("bad_inputs")
    try:
        session = Session(processes, listener)
        session.ready()
        lanes: dict[str, list[Case]] = {}  # node -> its cases, grouped by cause
        for case in node_cases():
            lanes.setdefault(case.payload[0], []).append(case)
        lanes = {node: by_cause(queue) for node, queue in lanes.items()}
        causes: set[str] = set()
        alone: set[str] = set()  # cases of a group whose node logged a line: each runs again by itself
        started: set[tuple[str, str]] = set()  # (cause, topic) of which a case has been sent
        held: dict[str, float] = {}  # node -> when its lane goes on after a group it logged a line for
        sent: dict[str, Pending] = {}  # node -> its cases under way
        while any(lanes.values()) or sent:
            for node, queue in lanes.items():
                if node not in sent and queue and time.monotonic() >= held.get(node, 0.0):
                    sent[node] = session.start(next_cases(queue, causes, alone, started))
            listener.spin_for(0.01)
            for node, pending in list(sent.items()):
                if session.advance(pending):
                    del sent[node]
                    results = session.finish(pending, causes)
                    if results is None:  # each again by itself once the lines just logged no longer throttle
                        alone.update(case.name for case in pending.cases)
                        lanes[node][:0] = pending.cases
                        held[node] = (pending.settled or 0.0) + THROTTLE_PERIOD + WINDOW
                    else:
                        yield from results
    finally:
        listener.close()

"""One malformed-URDF corpus: every case is the valid robot ``BASE`` with one defect.

``BASE`` is a two-joint arm with inertias, a collision sphere, a fixed tool link and a SimulatedSystem
``<ros2_control>`` block (no ROS interface), so every consumer accepts it: ``kinodyn.Model``, the TF tree,
control_node's description and limit parser, the simulator's contact spheres and SimulatedSystem, and the
nodes' URDF loader. ``REFUSED`` maps a case name to ``(URDF text or file bytes, the one-line message every
consumer must give)``; ``WARNED`` holds what is accepted with exactly one ``URDFWarning``.
"""

from __future__ import annotations

INERTIAL = ('<inertial><origin xyz="0 0 0.1" rpy="0 0 0"/><mass value="1"/>'
            '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>')
BASE = f"""<?xml version="1.0"?>
<robot name="corpus">
  <link name="base">{INERTIAL}
    <collision><origin xyz="0 0 -0.05"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="upper"><inertial><origin xyz="0 0 0.1"/><mass value="2"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.01"/></inertial></link>
  <link name="lower">{INERTIAL}</link>
  <link name="tool"/>
  <joint name="j1" type="revolute"><origin xyz="0 0 0.1" rpy="0 0 0"/><parent link="base"/>
    <child link="upper"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="2"/>
    <dynamics damping="0.1" friction="0"/></joint>
  <joint name="j2" type="revolute"><origin xyz="0 0 0.2"/><parent link="upper"/><child link="lower"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="5" velocity="3"/></joint>
  <joint name="tool_joint" type="fixed"><origin xyz="0 0 0.2"/><parent link="lower"/><child link="tool"/>
    </joint>
  <gazebo reference="base"><mu1>0.8</mu1></gazebo>
  <ros2_control name="sim" type="system">
    <hardware><plugin>kinodyn_control/SimulatedSystem</plugin><param name="ros_interface">false</param>
      </hardware>
    <joint name="j1"><command_interface name="effort"><param name="min">-10</param>
      <param name="max">10</param></command_interface>
      <state_interface name="position"><param name="initial_value">0.1</param></state_interface>
      <state_interface name="velocity"/></joint>
    <joint name="j2"><command_interface name="effort"/><state_interface name="position"/>
      <state_interface name="velocity"/></joint>
  </ros2_control>
</robot>
"""
FINITE = "every number in a URDF must be finite"


def variant(old: str, new: str) -> str:
    """``BASE`` with its one occurrence of ``old`` replaced by ``new``."""
    assert BASE.count(old) == 1, old
    return BASE.replace(old, new)


J1_ORIGIN = '<origin xyz="0 0 0.1" rpy="0 0 0"/><parent link="base"/>'
J1_LIMIT = '<limit lower="-1" upper="1" effort="10" velocity="2"/>'
J2_AXIS = '<child link="lower"/>\n    <axis xyz="0 1 0"/>'
UPPER_MASS = '<mass value="2"/>'
SPHERE = '<sphere radius="0.05"/>'
MIN = '<param name="min">-10</param>'
TOOL = '<joint name="tool_joint" type="fixed">'
LINK_TOOL = '<link name="tool"/>'


def _nonfinite(where: str, token: str) -> str:
    return f"{where}: {token!r} is not a finite number; {FINITE}"


REFUSED: dict[str, tuple[str | bytes, str]] = {
    # --- non-finite numbers anywhere ----------------------------------------------------------------------
    "nan_joint_origin": (
        variant(J1_ORIGIN, '<origin xyz="0 nan 0.1" rpy="0 0 0"/><parent link="base"/>'),
        _nonfinite("""joint 'j1' <origin xyz="0 nan 0.1">""", "nan"),
    ),
    "inf_joint_rpy": (
        variant(J1_ORIGIN, '<origin xyz="0 0 0.1" rpy="0 inf 0"/><parent link="base"/>'),
        _nonfinite("""joint 'j1' <origin rpy="0 inf 0">""", "inf"),
    ),
    "nan_mass": (variant(UPPER_MASS, '<mass value="NaN"/>'),
                 _nonfinite("""link 'upper' <inertial> <mass value="NaN">""", "NaN")),
    "overflow_inertia": (
        variant('ixx="0.02"', 'ixx="1e400"'),
        _nonfinite("""link 'upper' <inertial> <inertia ixx="1e400">""", "1e400"),
    ),
    "nan_inertial_origin": (
        variant('<inertial><origin xyz="0 0 0.1"/>', '<inertial><origin xyz="0 0 nan"/>'),
        _nonfinite("""link 'upper' <inertial> <origin xyz="0 0 nan">""", "nan"),
    ),
    "inf_axis": (variant(J2_AXIS, '<child link="lower"/><axis xyz="0 -inf 0"/>'),
                 _nonfinite("""joint 'j2' <axis xyz="0 -inf 0">""", "-inf")),
    "nan_limit_effort": (
        variant(J1_LIMIT, '<limit lower="-1" upper="1" effort="nan" velocity="2"/>'),
        _nonfinite("""joint 'j1' <limit effort="nan">""", "nan"),
    ),
    "inf_limit_velocity": (
        variant(J1_LIMIT, '<limit lower="-1" upper="1" effort="10" velocity="Infinity"/>'),
        _nonfinite("""joint 'j1' <limit velocity="Infinity">""", "Infinity"),
    ),
    "nan_dynamics": (variant('damping="0.1"', 'damping="nan"'),
                     _nonfinite("""joint 'j1' <dynamics damping="nan">""", "nan")),
    "nan_mimic_multiplier": (
        variant(J2_AXIS, J2_AXIS + '<mimic joint="j1" multiplier="nan"/>'),
        _nonfinite("""joint 'j2' <mimic multiplier="nan">""", "nan"),
    ),
    "nan_collision_radius": (variant(SPHERE, '<sphere radius="nan"/>'),
                             _nonfinite("""link 'base' <collision> <geometry> <sphere radius="nan">""",
                                        "nan")),
    "inf_collision_origin": (
        variant('<collision><origin xyz="0 0 -0.05"/>', '<collision><origin xyz="0 0 -inf"/>'),
        _nonfinite("""link 'base' <collision> <origin xyz="0 0 -inf">""", "-inf"),
    ),
    "nan_ros2_control_min": (
        variant(MIN, '<param name="min">nan</param>'),
        _nonfinite("ros2_control 'sim' joint 'j1' command_interface 'effort' <param name=\"min\">nan</param>",
                   "nan"),
    ),
    "inf_ros2_control_initial_value": (
        variant('<param name="initial_value">0.1</param>', '<param name="initial_value">inf</param>'),
        _nonfinite("ros2_control 'sim' joint 'j1' state_interface 'position' "
                   '<param name="initial_value">inf</param>', "inf"),
    ),
    "huge_origin": (
        variant('<origin xyz="0 0 0.2"/><parent link="upper"/>',
                '<origin xyz="1e300 0 0.2"/><parent link="upper"/>'),
        """joint 'j2' <origin xyz="1e300 0 0.2">: '1e300' is out of range; every number in a URDF must be """
        "within +-1e+100",
    ),
    "nan_gazebo_text": (variant("<mu1>0.8</mu1>", "<mu1>nan</mu1>"),
                        _nonfinite('<gazebo reference="base"> <mu1>nan</mu1>', "nan")),
    # --- numbers that are not numbers ----------------------------------------------------------------------
    "word_in_origin": (
        variant(J1_ORIGIN, '<origin xyz="0 zero 0.1" rpy="0 0 0"/><parent link="base"/>'),
        """joint 'j1' <origin xyz="0 zero 0.1">: 'zero' is not a number""",
    ),
    "short_vector": (
        variant(J1_ORIGIN, '<origin xyz="0 0.1" rpy="0 0 0"/><parent link="base"/>'),
        """joint 'j1' <origin xyz="0 0.1">: needs 3 numbers, got 2""",
    ),
    "word_in_ros2_control_max": (
        variant('<param name="max">10</param>', '<param name="max">ten</param>'),
        "ros2_control 'sim' joint 'j1' command_interface 'effort' <param name=\"max\">ten</param>: "
        "'ten' is not a number",
    ),
    # --- structure -----------------------------------------------------------------------------------------
    "missing_parent_link": (
        variant('<parent link="base"/>', '<parent link="bse"/>'),
        """joint 'j1' <parent link="bse">: names parent link 'bse', which is not defined; """
        "close link names: ['base']",
    ),
    "missing_child_link": (
        variant('<child link="tool"/>', '<child link="tol"/>'),
        """joint 'tool_joint' <child link="tol">: names child link 'tol', which is not defined; """
        "close link names: ['tool']",
    ),
    "cycle": (
        variant(TOOL, '<joint name="back" type="fixed"><parent link="tool"/><child link="base"/></joint>'
                + TOOL),
        "URDF has no root link: the joints form a cycle",
    ),
    "two_roots": (variant(LINK_TOOL, LINK_TOOL + '<link name="stray"/>'),
                  "URDF has 2 root links ['base', 'stray']: every link but one needs a parent joint"),
    "duplicate_link": (variant(LINK_TOOL, LINK_TOOL + LINK_TOOL),
                       "duplicate link names: ['tool']; every <link name> must be unique"),
    "duplicate_joint": (
        variant(TOOL, '<joint name="j1" type="fixed"><parent link="tool"/><child link="extra"/></joint>'
                '<link name="extra"/>' + TOOL),
        "duplicate joint names: ['j1']; every <joint name> must be unique",
    ),
    "child_of_two_joints": (
        variant(TOOL, '<joint name="again" type="fixed"><parent link="base"/><child link="tool"/></joint>'
                + TOOL),
        "link 'tool' is the child of two joints ('again', 'tool_joint'): a URDF must be a tree",
    ),
    "unknown_joint_type": (
        variant(TOOL, '<joint name="tool_joint" type="hinge">'),
        "malformed URDF: ParseError in /robot[@name='corpus']/joint[@name='tool_joint']: "
        "Invalid joint type: hinge",
    ),
    "floating_joint": (
        variant(TOOL, '<joint name="tool_joint" type="floating">'),
        "joint 'tool_joint' has type 'floating'; only a floating root is read (one floating joint, from a "
        "massless root link that has no other joint, to the robot's base); otherwise a free-floating root "
        "comes from floating_base=True, or in the nodes from an Odometry topic",
    ),
    "zero_axis": (variant(J2_AXIS, '<child link="lower"/><axis xyz="0 0 0"/>'),
                  """joint 'j2' <axis xyz="0.0 0.0 0.0">: give a finite nonzero <axis xyz>"""),
    "mimic_unknown_joint": (
        variant(J2_AXIS, J2_AXIS + '<mimic joint="j9"/>'),
        """joint 'j2' <mimic joint="j9">: mimics 'j9', not a joint of the URDF""",
    ),
    "mimic_of_fixed_joint": (
        variant(J2_AXIS, J2_AXIS + '<mimic joint="tool_joint"/>'),
        """joint 'j2' <mimic joint="tool_joint">: mimics 'tool_joint', which is not an independent movable """
        "joint; a mimic joint must follow a revolute, continuous or prismatic non-mimic joint",
    ),
    "missing_required_attribute": (
        variant(J1_LIMIT, '<limit lower="-1" upper="1" velocity="2"/>'),
        "malformed URDF: ParseError in /robot[@name='corpus']/joint[@name='j1']/limit: "
        "Required attribute not set in XML: effort",
    ),
    # --- values out of range -------------------------------------------------------------------------------
    "negative_mass": (variant(UPPER_MASS, '<mass value="-2"/>'),
                      """link 'upper' <inertial> <mass value="-2.0">: mass -2.0 must be >= 0"""),
    "lower_above_upper": (
        variant(J1_LIMIT, '<limit lower="1" upper="-1" effort="10" velocity="2"/>'),
        """joint 'j1' <limit lower="1.0" upper="-1.0">: lower limit 1.0 > upper limit -1.0""",
    ),
    "negative_effort_limit": (
        variant(J1_LIMIT, '<limit lower="-1" upper="1" effort="-10" velocity="2"/>'),
        """joint 'j1' <limit effort="-10.0">: the effort limit must be >= 0""",
    ),
    "negative_damping": (variant('damping="0.1"', 'damping="-0.1"'),
                         """joint 'j1' <dynamics damping="-0.1">: damping must be >= 0"""),
    "zero_collision_radius": (
        variant(SPHERE, '<sphere radius="0"/>'),
        """link 'base' <collision> <geometry> <sphere radius="0.0">: a collision sphere radius must be > 0""",
    ),
    # --- not a URDF at all ---------------------------------------------------------------------------------
    "binary_file": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + BASE.encode(),
                    "the URDF is not UTF-8 text (byte 0x89 at offset 0): give a URDF XML file"),
    "empty": ("", "the URDF is empty: give URDF XML text starting with '<robot'"),
    "whitespace_only": (" \n\t", "the URDF is empty: give URDF XML text starting with '<robot'"),
    "not_xml": (BASE[:200], "URDF is not well-formed XML: unclosed token: line 3, column 149"),
    "wrong_root": ("<sdf version='1.9'><model name='m'/></sdf>",
                   "URDF root element must be <robot>, got <sdf>"),
    "no_link": ("<robot name='r'/>", "URDF has no <link>"),
}
"""Case -> (URDF, the message of every consumer)."""

WARNED: dict[str, tuple[str, str]] = {
    "mimic_in_fixed_joint": (
        variant(TOOL, TOOL + '<mimic joint="j1" multiplier="2"/>'),
        """fixed joint 'tool_joint' carries <mimic joint="j1">; ignored (a fixed joint does not move), as """
        "urdfdom, robot_state_publisher and Pinocchio do",
    ),
    "revolute_range_left_out": (  # (as TSID's quadruped in example-robot-data writes its knees)
        variant('<limit lower="-2" upper="2" effort="5" velocity="3"/>', '<limit effort="5" velocity="3"/>'),
        "joint 'j2' <limit>: its range is the one point 0 (lower = upper; urdfdom reads a lower or upper "
        "left out as 0), so it cannot move within its limits; give its range (a revolute joint without "
        'bounds is type="continuous")',
    ),
}
"""Case -> (URDF, the one warning every consumer gives); the URDF is otherwise accepted."""

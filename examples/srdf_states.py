"""Named joint configurations of an SRDF: its ``<group_state name="..."><joint name value/></group_state>``
elements, the standing poses robot descriptions ship beside their URDF (example-robot-data's ``standing`` and
``half_sitting``, MoveIt's named states). Shared by ``acceptance_matrix.py`` and ``humanoid_balance.py``
(``--srdf FILE --state NAME``, and ``--joint NAME=RAD``: ``joint_angle``).
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING
from xml.etree import ElementTree

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path


def group_state(srdf: Path, name: str) -> dict[str, float]:
    """The joint angles of the state ``name`` of ``srdf``, by joint name. A joint with several values (a
    floating root's pose, as example-robot-data's ``root_joint`` carries) is left out: the stance is the
    joints'. ``ValueError`` naming the file when it is not XML, has no such state (the ones it has are
    listed) or a value is not a finite number."""
    try:
        root = ElementTree.parse(srdf).getroot()
    except (ElementTree.ParseError, OSError) as exc:
        raise ValueError(f"SRDF {srdf}: {exc}") from None
    states = {state.get("name"): state for state in root.iter("group_state")}
    if name not in states:
        raise ValueError(f"SRDF {srdf} has no group_state {name!r}; its states: "
                         f"{', '.join(sorted(str(s) for s in states)) or 'none'}")
    angles: dict[str, float] = {}
    for joint in states[name].iter("joint"):
        text = joint.get("value", "")
        try:
            values = [float(v) for v in text.split()]
        except ValueError:
            values = []
        if not values or not all(math.isfinite(v) for v in values):
            raise ValueError(f"SRDF {srdf} state {name!r}: joint {joint.get('name')!r} value {text!r} is not "
                             f"a finite number")
        if len(values) == 1:
            angles[str(joint.get("name"))] = values[0]
    return angles


def for_model(srdf: Path, name: str, movable: Iterable[str]) -> dict[str, float]:
    """``group_state``'s angles of the joints in ``movable`` (a model's movable joints). A state may name
    joints the URDF does not move on their own or does not have (Romeo's SRDF in example-robot-data names its
    fingers, mimic joints of the hand's in its URDF, and eyes and toes, not in it): they are left out, named
    in one printed line, as Pinocchio's ``loadReferenceConfigurations`` leaves them out."""
    angles = group_state(srdf, name)
    names = set(movable)
    left_out = sorted(joint for joint in angles if joint not in names)
    if left_out:
        print(f"--srdf {srdf} state {name!r}: left out {', '.join(left_out)} (not movable joints of the "
              f"URDF)")
    return {joint: angle for joint, angle in angles.items() if joint in names}


def joint_angle(text: str) -> tuple[str, float]:
    """``NAME=RAD`` as ``(name, angle)``: the command lines' ``--joint`` (an ``argparse`` type; anything else,
    or an angle that is no finite number, is the parser's error naming it)."""
    name, sep, value = text.partition("=")
    try:
        angle = float(value)
    except ValueError:
        angle = math.nan
    if not sep or not name or not math.isfinite(angle):
        raise argparse.ArgumentTypeError(f"--joint takes NAME=RAD (a finite angle), got {text!r}")
    return name, angle

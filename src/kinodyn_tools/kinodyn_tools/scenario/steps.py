"""A closed-loop scenario as data: a list of timed steps (docs/closed-loop.md, "Scenarios").

Each step lasts ``duration`` seconds of simulated time. At its start the runner requests the wbc's
``locomotion_mode`` (if ``mode`` is given: one of the locomotion controller's modes, ``MODES``; a gait the
robot cannot make is refused by the wbc node, a refusal the result lists), publishes ``base_pose`` (standing
base pose offsets x, y, height [m], roll, pitch, yaw [rad] about the nominal stance, on the wbc's
``~/base_pose``) and applies ``push`` (a force in world axes on ``push_link`` for ``push_duration`` s,
through the simulator's ``~/push``); during the step it publishes ``cmd_vel`` (vx, vy in m/s, wz in rad/s,
body frame). Velocity tracking is judged from ``settle`` seconds after the step's start (the transient
excluded) when ``track`` is true.
A scenario is a YAML list of mappings with these keys, or the same
list built in Python.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml
from kinodyn.control.locomotion import MODES  # the modes the wbc node's locomotion_mode accepts


@dataclass(frozen=True)
class Step:
    name: str
    duration: float  # s of simulated time
    mode: str | None = None  # wbc locomotion_mode requested at the start (None: unchanged)
    cmd_vel: tuple[float, float, float] = (0.0, 0.0, 0.0)  # vx, vy [m/s], wz [rad/s]
    base_pose: tuple[float, ...] | None = None  # x, y, height [m], roll, pitch, yaw [rad], at the start
    push: tuple[float, float, float] | None = None  # N, world axes, at the start
    push_duration: float = 0.2  # s
    push_link: str = "base_link"
    settle: float = 1.0  # s from the start not judged for tracking
    track: bool = False  # judge the velocity tracking of this step

    def __post_init__(self) -> None:
        object.__setattr__(self, "cmd_vel", _vector(self.cmd_vel, "cmd_vel", self.name))
        if self.push is not None:
            object.__setattr__(self, "push", _vector(self.push, "push", self.name))
        if self.base_pose is not None:
            object.__setattr__(self, "base_pose", _vector(self.base_pose, "base_pose", self.name, size=6))
        for key in ("duration", "push_duration"):
            value = getattr(self, key)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"step {self.name!r}: {key} must be a finite number > 0, got {value}")
        tracked_too_long = self.track and self.settle >= self.duration
        if not (math.isfinite(self.settle) and self.settle >= 0.0) or tracked_too_long:
            raise ValueError(f"step {self.name!r}: settle must be >= 0 and, tracked, below duration = "
                             f"{self.duration}; got {self.settle}")
        if self.mode is not None and self.mode not in MODES:
            raise ValueError(f"step {self.name!r}: mode must be one of {', '.join(MODES)}, got {self.mode!r}")


def _vector(value: Iterable[float], key: str, name: str, size: int = 3) -> tuple[float, ...]:
    out = tuple(float(x) for x in value)
    if len(out) != size or not all(math.isfinite(x) for x in out):
        raise ValueError(f"step {name!r}: {key} must be {size} finite numbers, got {list(value)}")
    return out


def steps_from_data(data: Iterable[Mapping[str, Any]]) -> list[Step]:
    """Steps from a list of mappings (a parsed YAML file); ValueError naming the step and the key."""
    known = {f.name for f in fields(Step)}
    steps = []
    for index, raw in enumerate(data):
        if not isinstance(raw, Mapping):
            raise ValueError(f"scenario step {index} must be a mapping, got {raw!r}")
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ValueError(f"scenario step {index}: unknown keys {unknown} (known: {sorted(known)})")
        try:
            steps.append(Step(**raw))
        except TypeError as exc:
            raise ValueError(f"scenario step {index}: {exc}") from None
    if not steps:
        raise ValueError("a scenario needs at least one step")
    return steps


def load_steps(path: str | Path) -> list[Step]:
    """Steps from a YAML file holding a list of step mappings."""
    data = yaml.safe_load(Path(path).read_text())
    if not isinstance(data, list):
        raise ValueError(f"{path}: a scenario file holds a list of steps, got {type(data).__name__}")
    return steps_from_data(data)


def random_steps(duration: float, seed: int, limits: tuple[float, float, float] = (0.5, 0.2, 0.6),
                 hold: tuple[float, float] = (2.0, 4.0), name: str = "random") -> list[Step]:
    """Random cmd_vel changes for ``duration`` s: each command uniform within +-``limits`` (vx, vy, wz),
    held a uniform ``hold`` range of seconds (the last one cut to end at ``duration``); seeded."""
    rng = random.Random(seed)
    steps: list[Step] = []
    t = 0.0
    while t < duration - 1e-9:
        length = min(rng.uniform(*hold), duration - t)
        vx, vy, wz = (rng.uniform(-a, a) for a in limits)
        cmd = (vx, vy, wz)
        steps.append(Step(f"{name} {len(steps) + 1}", length, cmd_vel=cmd, settle=min(1.0, length / 2)))
        t += length
    return steps

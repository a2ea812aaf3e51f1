"""Pairs each joint state with the base state (odometry) of its stamp, so a lockstep run is deterministic.

The `wbc` node answers every joint state with one command. With the estimator closing the loop, the odometry
of stamp ``t_k`` is computed from the joint states and IMU of ``t_k`` and arrives a little after the joint
states: the node then waits for it (``wait`` wall seconds at most) instead of using the odometry of
``t_(k-1)``. It waits only while the base stream keeps up (its newest stamp reached the previous joint
state's), so a silent or initialising estimator costs one wait, not one per tick; the caller judges the age
of what it gets. In ``lockstep`` (a simulation that waits for the answers) every joint state newer than
those answered waits once a base state has come, also while the base stream is behind: the estimator,
which the simulation does not wait for, catches up with the simulation paused instead of falling further
behind on a loaded machine. A wait there expires only where the estimator gives no estimate of the stamp
(an IMU sample it holds as a spike until the next one confirms it: the next stamp's estimate then comes)
or has gone silent (stopped, or initialising again): the stamp is answered with the newest base state, and
after two expired waits with no base state between them the joint states are answered at once until a
base state arrives. A re-published joint state (a lockstep simulation re-publishes the state it waits on)
is the one waiting, or, once answered, answered at once.
Ground-truth odometry from the simulator (stamped after each step, before the next joint states) is normally
there already. Times are integers in nanoseconds: stamps, and a monotonic clock for the wait.
"""

from __future__ import annotations

from typing import Generic, NamedTuple, TypeVar

SILENT_AFTER = 2
"""Lockstep: expired waits with no base state between them after which the base stream counts as silent."""
JointsT = TypeVar("JointsT")
BaseT = TypeVar("BaseT")


class Paired(NamedTuple, Generic[JointsT, BaseT]):
    """A joint state (``joints``, stamped ``stamp_ns``) with the newest base state when it was answered
    (``base`` None if none came yet, ``base_stamp_ns`` its stamp); ``waited_out``: the wait expired."""

    stamp_ns: int
    joints: JointsT
    base: BaseT | None
    base_stamp_ns: int | None
    waited_out: bool


class BaseStateSync(Generic[JointsT, BaseT]):
    """Pairs joint states (``JointsT``) with base states (``BaseT``): module doc."""

    def __init__(self, wait_ns: int, lockstep: bool = False) -> None:
        if wait_ns < 0:
            raise ValueError(f"the base-state wait must be >= 0, got {wait_ns} ns")
        self.wait_ns, self.lockstep = wait_ns, lockstep
        self._expired = 0  # waits expired since the last base state
        self._base: BaseT | None = None
        self._base_stamp: int | None = None
        self._answered: int | None = None  # stamp of the last joint state answered
        self._pending: tuple[int, JointsT, int] | None = None  # stamp, joints, arrival (monotonic ns)
        self.timeouts = 0

    def joint_state(self, stamp_ns: int, joints: JointsT, now_ns: int) -> list[Paired[JointsT, BaseT]]:
        """Take a joint state; returns what is ready to answer (a pending one first, then this one unless it
        waits for its base state)."""
        if self._pending is not None and self._pending[0] == stamp_ns:
            return []  # a copy of the joint state waiting
        ready = [self._release(True)] if self._pending is not None else []
        if self._base_stamp is not None and self._base_stamp >= stamp_ns:
            ready.append(self._pair(stamp_ns, joints, False))
        elif self._waits(stamp_ns) and self.wait_ns > 0:
            self._pending = (stamp_ns, joints, now_ns)
        else:
            ready.append(self._pair(stamp_ns, joints, False))
        return ready

    def base_state(self, stamp_ns: int, base: BaseT) -> list[Paired[JointsT, BaseT]]:
        """Take a base state; returns the pending joint state if this one answers it."""
        self._base, self._base_stamp, self._expired = base, stamp_ns, 0
        if self._pending is not None and stamp_ns >= self._pending[0]:
            return [self._release(False)]
        return []

    def poll(self, now_ns: int) -> list[Paired[JointsT, BaseT]]:
        """The pending joint state once it has waited ``wait`` (answered with the newest base state)."""
        if self._pending is not None and now_ns - self._pending[2] >= self.wait_ns:
            return [self._release(True)]
        return []

    def _waits(self, stamp_ns: int) -> bool:
        """Whether a joint state stamped ``stamp_ns``, newer than the base state, waits for its own (module
        doc)."""
        base, answered = self._base_stamp, self._answered
        if self.lockstep:
            new = answered is None or stamp_ns > answered
            return base is not None and new and self._expired < SILENT_AFTER
        return base is not None and answered is not None and base >= answered

    def _release(self, waited_out: bool) -> Paired[JointsT, BaseT]:
        assert self._pending is not None
        stamp, joints, _ = self._pending
        self._pending = None
        self.timeouts += waited_out
        self._expired += waited_out
        return self._pair(stamp, joints, waited_out)

    def _pair(self, stamp_ns: int, joints: JointsT, waited_out: bool) -> Paired[JointsT, BaseT]:
        self._answered = stamp_ns if self._answered is None else max(self._answered, stamp_ns)
        return Paired(stamp_ns, joints, self._base, self._base_stamp, waited_out)

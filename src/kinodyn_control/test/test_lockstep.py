"""Lockstep without ROS: the gate's waiting, and the manager's lockstep cycle (lockstep.py, manager.py).

A cycle publishes the state of step k (stamped t_k) before it waits; it neither updates the command
controllers nor writes until every active controller with external commands holds the command stamped t_k;
a command of any other stamp (an earlier cycle's, or one ahead) is refused with one line and does not
release it; a stall is logged once and the state re-published; stopping the gate
ends the wait; unstamped command controllers and real hardware are refused in lockstep. Threads are joined
or polled with generous limits: nothing here asserts a duration.
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING

import pytest
from kinodyn_common.stamps import NS
from kinodyn_control.lockstep import LockstepGate, LockstepLoop, lockstep_period_ns
from kinodyn_control.manager import HardwareError

from kinodyn_control import testing

if TYPE_CHECKING:
    from collections.abc import Callable

DT = 0.002
DT_NS = 2_000_000

def poll(predicate: Callable[[], object], limit: float = 10.0) -> bool:
    """Poll ``predicate`` until it holds (True) or ``limit`` seconds pass (False)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.001)
    return bool(predicate())


class Waiter:
    """Runs ``function`` on a thread and keeps its result."""

    def __init__(self, function: Callable[[], object]) -> None:
        self.result = None
        self.thread = threading.Thread(target=self._run, args=(function,), daemon=True)
        self.thread.start()

    def _run(self, function: Callable[[], object]) -> None:
        self.result = function()

    def join(self) -> None:
        self.thread.join(10.0)
        assert not self.thread.is_alive()


# --- the gate ---------------------------------------------------------------------------------------------
def test_gate_stall_is_logged_once_state_republished_until_ready() -> None:
    records: list = []
    gate = LockstepGate(0.02, testing.ListLogger("gate", records))
    flag, republished = threading.Event(), []
    missing = "'pd' (latest stamp none)"
    waiter = Waiter(lambda: gate.wait(flag.is_set, lambda: missing, lambda: republished.append(1), 0.25))
    assert poll(lambda: len(republished) >= 3)  # one republish per lockstep_timeout while stalled
    flag.set()
    gate.notify()
    waiter.join()
    assert waiter.result is True
    warnings = [m for level, m in records if level == "warning"]
    assert len(warnings) == 1
    assert gate.stalls == 1
    assert warnings[0].startswith("lockstep: no command answering t = 0.250000 s after 0.02 s")
    assert "'pd' (latest stamp none)" in warnings[0]
    assert next(m for level, m in records if level == "info").startswith(
        "lockstep: the command for t = 0.250000 s arrived after")


def test_gate_ready_does_not_wait_and_stop_ends_waiting() -> None:
    records: list = []
    gate = LockstepGate(10.0, testing.ListLogger("gate", records))
    assert gate.wait(lambda: True, str, lambda: None, 0.0) is True
    waiter = Waiter(lambda: gate.wait(lambda: False, str, lambda: None, 0.0))
    gate.stop()
    waiter.join()
    assert waiter.result is False
    assert records == []
    assert gate.wait(lambda: True, str, lambda: None, 0.0) is False  # stopped for good


@pytest.mark.parametrize("timeout", [0.0, -1.0, math.inf, math.nan])
def test_gate_timeout_must_be_positive(timeout: float) -> None:
    with pytest.raises(ValueError, match="lockstep_timeout must be a positive number of seconds"):
        LockstepGate(timeout, None)


def test_lockstep_period_is_whole_nanoseconds() -> None:
    assert lockstep_period_ns(500) == 2_000_000
    assert lockstep_period_ns(1000) == 1_000_000
    with pytest.raises(ValueError, match="update_rate to divide 1e9"):
        lockstep_period_ns(3)


# --- the manager's lockstep cycle ---------------------------------------------------------------------------
def lockstep_arm() -> tuple[testing.Harness, LockstepGate]:
    h = testing.two_joint_arm()
    gate = LockstepGate(10.0, h.logger)
    h.manager.enter_lockstep(gate, DT)
    h.start("jsb", testing.JOINT_STATE_BROADCASTER)
    h.start("pd", testing.JOINT_PD, {"joints": list(testing.ARM_JOINTS), "watchdog_timeout": 0.01})
    return h, gate


def send(h: testing.Harness, stamp_ns: int, effort: float) -> None:
    """A command answering the state stamped ``stamp_ns``, received at that simulated time (control_node's
    controllers' clock in lockstep)."""
    h.contexts["pd"].time = stamp_ns * 1e-9
    msg = testing.pd_command(testing.ARM_JOINTS, [0.0, 0.0], [0.0, 0.0], [effort, effort], [0.0, 0.0],
                             [0.0, 0.0], stamp_ns)
    h.contexts["pd"].subscriptions["/pd/commands"](msg)


def test_cycle_publishes_state_then_waits_for_the_command_stamped_for_it() -> None:
    h, gate = lockstep_arm()
    states = h.contexts["jsb"].publishers["/joint_states"].messages
    for k, effort in enumerate((1.0, 2.0, 3.0)):
        t_ns = k * 2_000_000
        waiter = Waiter(lambda t=t_ns: h.manager.lockstep_cycle(t * 1e-9, DT, gate))
        assert poll(lambda n=k + 1: len(states) == n)  # the state of step k is out before the wait
        assert (states[-1].header.stamp.sec, states[-1].header.stamp.nanosec) == (0, t_ns)
        if k > 0:
            send(h, t_ns - 2_000_000, 9.0)  # answers the previous state: refused, does not release the cycle
        waiter.thread.join(0.05)
        assert waiter.thread.is_alive()
        assert h.manager.missing_commands(t_ns * 1e-9) == [("pd", None if k == 0 else t_ns - 2_000_000)]
        if k == 0:
            assert math.isnan(h.command("j1/effort"))  # nothing written before the first command
        else:
            assert h.command("j1/effort") == effort - 1.0  # still the previous step's command
        send(h, t_ns, effort)
        waiter.join()
        assert waiter.result is True
        assert h.command("j1/effort") == h.command("j2/effort") == effort  # that step's command, applied
    # the 10 ms watchdog runs on simulated time: waiting does not trip it; the stale answers are one line
    assert h.messages("warning") == [
        "rejected command on /pd/commands: header.stamp 0.000000000 s is behind the state waiting for its "
        "command, t = 0.002000000 s (lockstep takes only a command stamped with the joint states it "
        "answers); the cycle keeps waiting"]


def test_a_command_stamped_ahead_is_refused_and_the_cycle_keeps_waiting() -> None:
    """A command stamped 10 s ahead of the state the cycle waits for (``>=`` took it as "not late" and let
    the simulation run on it) is refused with one line naming topic, stamp and the expected stamp; the
    cycle keeps waiting, nothing is written, the watchdog stays quiet; the right stamp releases it."""
    h, gate = lockstep_arm()
    for k in range(2):
        waiter = Waiter(lambda t=k * DT: h.manager.lockstep_cycle(t, DT, gate))
        if k == 1:
            send(h, DT_NS + 10 * NS, 7.0)
            waiter.thread.join(0.05)
            assert waiter.thread.is_alive()  # still waiting
            assert h.manager.missing_commands(DT) == [("pd", 0)]
            assert h.command("j1/effort") == 1.0  # the previous cycle's command, the +10 s one not written
            assert h.messages("warning") == [
                "rejected command on /pd/commands: header.stamp 10.002000000 s is ahead of the state waiting "
                "for its command, t = 0.002000000 s (lockstep takes only a command stamped with the joint "
                "states it answers); the cycle keeps waiting"]
        send(h, k * DT_NS, 1.0 + k)
        waiter.join()
        assert waiter.result is True
    assert h.command("j1/effort") == 2.0
    assert len(h.messages("warning")) == 1  # no watchdog trip


def test_a_command_before_the_first_state_is_refused() -> None:
    h, _ = lockstep_arm()
    send(h, 0, 1.0)
    assert h.manager.missing_commands(0.0) == [("pd", None)]
    assert h.messages("warning") == [
        "rejected command on /pd/commands: header.stamp 0.000000000 s arrived before any state was published "
        "(lockstep: a command answers a published state)"]


def test_no_command_controller_no_wait_and_stopped_gate_ends_the_cycle() -> None:
    h = testing.two_joint_arm()
    gate = LockstepGate(10.0, h.logger)
    h.manager.enter_lockstep(gate, DT)
    h.start("jsb", testing.JOINT_STATE_BROADCASTER)
    assert h.manager.lockstep_cycle(0.0, DT, gate) is True  # nothing to wait for
    h.start("pd", testing.JOINT_PD, {"joints": list(testing.ARM_JOINTS)})
    waiter = Waiter(lambda: h.manager.lockstep_cycle(DT, DT, gate))
    gate.stop()
    waiter.join()
    assert waiter.result is False
    assert math.isnan(h.command("j1/effort"))  # never written without its command


def test_loop_runs_cycles_at_k_periods_until_stopped() -> None:
    h, gate = lockstep_arm()
    loop = LockstepLoop(h.manager.lockstep_cycle, 500, gate)
    loop.start()
    for k in range(5):
        def waiting(n: int = k) -> bool:
            return bool(h.manager.missing_commands(n * DT)) and round(loop.time * 1e9) == n * DT_NS

        assert poll(waiting)
        send(h, k * 2_000_000, float(k))
    assert poll(lambda: loop.cycles == 5)
    loop.stop()
    assert loop.error is None
    assert loop.cycles == 5
    stamps = [m.header.stamp.nanosec for m in h.contexts["jsb"].publishers["/joint_states"].messages]
    assert stamps == [k * 2_000_000 for k in range(6)]



class _Clocked:
    """A lockstep cycle that records (simulated time, wall seconds since the loop's first cycle)."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float]] = []
        self.start = 0.0

    def __call__(self, t: float, period: float, gate: LockstepGate) -> bool:
        now = time.monotonic()
        self.start = self.start or now
        self.seen.append((t, now - self.start))
        return True


@pytest.mark.parametrize("max_speed", [0.5, 2.0])
def test_loop_with_max_speed_never_runs_ahead_of_the_wall_clock(max_speed: float) -> None:
    cycle = _Clocked()
    gate = LockstepGate(1.0, None)
    loop = LockstepLoop(cycle, 100, gate, max_speed)
    loop.start()
    assert poll(lambda: loop.cycles >= 20)
    loop.stop()
    assert loop.error is None
    # simulated time at a cycle's start is never ahead of max_speed x the wall time since the first cycle
    # (sleeping can only make the loop later, so load cannot break this)
    assert all(t <= max_speed * wall + 1e-3 for t, wall in cycle.seen), cycle.seen[:5]
    assert [round(t * 100) for t, _ in cycle.seen] == list(range(len(cycle.seen)))


@pytest.mark.parametrize("max_speed", [-1.0, math.nan, math.inf])
def test_loop_max_speed_must_be_finite_and_non_negative(max_speed: float) -> None:
    with pytest.raises(ValueError, match="max_speed"):
        LockstepLoop(_Clocked(), 100, LockstepGate(1.0, None), max_speed)

def test_unstamped_command_controller_refused_in_lockstep() -> None:
    h = testing.two_joint_arm()
    h.manager.enter_lockstep(LockstepGate(1.0, h.logger), DT)
    h.manager.load("fwd", testing.FORWARD_COMMAND, {"joints": list(testing.ARM_JOINTS)})
    h.manager.configure("fwd")
    ok, message = h.manager.switch(["fwd"], [])
    assert not ok
    assert "Unable to activate controller 'fwd' in lockstep: its commands " in message
    assert "carry no header stamp" in message


def test_real_hardware_refuses_lockstep() -> None:
    xml = testing.robot_xml(testing.system_block(joints=testing.joint("j1", ("effort",), ("position",)),
                                                 plugin="kinodyn_control/RealDeviceSkeleton"), ("j1",))
    h = testing.Harness(xml)
    with pytest.raises(HardwareError, match="component 'sys': RealDeviceSkeleton cannot run in lockstep"):
        h.manager.enter_lockstep(LockstepGate(1.0, h.logger), DT)


class _Stalling(_Clocked):
    """A clocked cycle that stalls ``stall`` wall seconds at its fourth cycle."""

    def __init__(self, stall: float) -> None:
        super().__init__()
        self.stall = stall

    def __call__(self, t: float, period: float, gate: LockstepGate) -> bool:
        if len(self.seen) == 3:
            time.sleep(self.stall)
        return super().__call__(t, period, gate)


def test_loop_with_max_speed_does_not_hurry_after_a_stall() -> None:
    cycle, period, max_speed = _Stalling(0.3), 0.01, 1.0
    loop = LockstepLoop(cycle, 100, LockstepGate(1.0, None), max_speed)
    loop.start()
    assert poll(lambda: loop.cycles >= 20)
    loop.stop()
    assert loop.error is None
    # after the stall (30 periods of wall time) the loop keeps the pace: over any stretch of cycles, no more
    # than one period of simulated time beyond max_speed x the wall time (sleeping only makes it later)
    after = cycle.seen[3:]  # from the fourth cycle, time-stamped once its stall is over
    for i, (t_i, wall_i) in enumerate(after):
        for t_j, wall_j in after[i + 1:]:
            assert t_j - t_i <= max_speed * (wall_j - wall_i) + period + 1e-3, (t_i, wall_i, t_j, wall_j)

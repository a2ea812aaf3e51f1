"""Shared logic of the command controllers (forward command, joint PD): claim, validate, watchdog, limits.

A command message arrives on ``~/commands`` (``/<controller>/commands``) in the executor's thread (taken
serialized and read into numpy when the controller has a ``READER``: kinodyn_common.raw_messages; bytes that
are not a message of the type are rejected as malformed), is
validated there (``parse``; a rejected message is dropped with one warning per cause, throttled; any other
failure on one message is one error line per exception type, throttled, and the message is dropped too) and
handed to the control loop as one reference (atomic replacement) with its receipt time (``context.now()``,
which is simulated time in lockstep) and, for stamped messages, its header stamp (``command_stamp``). The
watchdog runs on the receipt time, never on the stamp. In lockstep a stamped command is taken only if its
stamp is the one of the state the cycle waits for (``stamp_problem``, set by the manager); any other is
dropped with one warning per side (ahead, behind), throttled, naming the stamp and the expected one. Every
update then writes, per joint: nothing before the first command (ros2_control's "no command yet"), the safe
command after the watchdog tripped, otherwise ``compute(target, q, qdot)``; the result goes through the URDF
limits (limits.py).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from kinodyn_common.conversions import InputError
from kinodyn_common.problem_log import DistinctProblemLog
from kinodyn_common.stamps import NS

from kinodyn_control.controllers.base import INDIVIDUAL, Controller, InterfaceConfiguration, Parameter
from kinodyn_control.controllers.limits import JointLimitArrays
from kinodyn_control.controllers.watchdog import WATCHDOG_PARAMETERS, CommandWatchdog, gain_bounds
from kinodyn_control.hardware.types import EFFORT, POSITION, VELOCITY, CallbackReturn, ReturnType, full_name


class JointCommandController(Controller):
    EXTERNAL_COMMANDS = True
    PARAMETERS: ClassVar[dict[str, Parameter]] = {
        "joints": Parameter("str_list", [], "joints commanded, in message order"),
        **WATCHDOG_PARAMETERS,
    }
    MESSAGE: ClassVar[type]
    READER: ClassVar[type | None] = None  # a reader of MESSAGE's bytes (kinodyn_common.raw_messages)

    def command_interface_name(self) -> str:
        raise NotImplementedError

    def parse(self, msg: Any) -> np.ndarray:  # noqa: ANN401  (the subclass's MESSAGE or its reader's view)
        """The validated target of ``msg``, in the controller's joint order; raises InputError (its ``key``
        throttles the warning)."""
        raise NotImplementedError

    def compute(self, target: np.ndarray, q: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def on_configure(self) -> CallbackReturn:
        assert self.context is not None
        self.joints = list(self.params["joints"])
        if not self.joints:
            return self.fail("parameter joints is empty; list the joints to command")
        unknown = [j for j in self.joints if j not in self.context.description.joint_limits]
        if unknown:
            return self.fail(f"joints {', '.join(unknown)} are not joints of the URDF")
        try:
            self.max_gains = gain_bounds(self.params)
            self.watchdog = CommandWatchdog(self.params, self.command_interface_name())
        except ValueError as exc:
            return self.fail(str(exc))
        self.limits = JointLimitArrays(self.context.description, self.joints)
        self.problems = DistinctProblemLog(self.logger)
        self._reference: tuple[Any, float, int | None] | None = None  # target, receipt time, stamp [ns]
        self._used: tuple[Any, float, int | None] | None = None
        self._reader = None if self.READER is None else self.READER()
        self.endpoints = [self.context.create_subscription(self.MESSAGE, "~/commands", self._on_command,
                                                           raw=self._reader is not None)]
        return CallbackReturn.SUCCESS

    def command_interface_configuration(self) -> InterfaceConfiguration:
        return InterfaceConfiguration(
            INDIVIDUAL, tuple(full_name(j, self.command_interface_name()) for j in self.joints)
        )

    def state_interface_configuration(self) -> InterfaceConfiguration:
        names = [full_name(j, i) for i in (POSITION, VELOCITY) for j in self.joints]
        return InterfaceConfiguration(INDIVIDUAL, tuple(names))

    def on_activate(self) -> CallbackReturn:
        self.watchdog.reset()
        self._reference = self._used = None
        self._previous = np.full(len(self.joints), np.nan)
        return CallbackReturn.SUCCESS

    def _on_command(self, msg: Any) -> None:  # noqa: ANN401  (a MESSAGE, or its bytes with a READER)
        assert self.context is not None
        try:
            if self._reader is not None:
                msg = self._reader.read(msg)
            target = self.parse(msg)
        except InputError as exc:
            self.problems.warn(exc.key, f"rejected command on /{self.name}/commands: {exc}")
            return
        except Exception as exc:  # noqa: BLE001  no message may stop the node: drop it and say why
            self.problems.error(type(exc).__name__, f"dropped command on /{self.name}/commands: parsing it "
                                                    f"failed with {type(exc).__name__}: {exc}")
            return
        header = msg.header.stamp if self.STAMPED_COMMANDS else None
        stamp_ns = None if header is None else header.sec * NS + header.nanosec
        cause, problem = ("", "") if stamp_ns is None else self.stamp_problem(stamp_ns)
        if cause:
            self.problems.warn(f"stamp:{cause}", f"rejected command on /{self.name}/commands: {problem}")
            return
        self._reference = (target, self.context.now(), stamp_ns)
        self.command_arrived()

    def command_stamp(self) -> int | None:
        reference = self._reference
        return None if reference is None else reference[2]

    def update(self, time: float, period: float) -> ReturnType:
        assert self.states is not None
        assert self.commands is not None
        measured = self.states.get()
        n = len(self.joints)
        q, qdot = measured[:n], measured[n:]
        reference = self._reference
        if reference is not None and reference is not self._used:
            self._used = reference
            self.watchdog.feed(reference[1])
        silence = self.watchdog.check(time, q)
        if silence is not None:
            self.logger.warning(
                f"controller '{self.name}': no command for {silence:.4f} s (watchdog_timeout "
                f"{self.watchdog.timeout} s); switching to the safe command {self.watchdog.describe()}"
            )
        if self.watchdog.tripped:
            command = self.watchdog.safe_command(q, qdot)
        elif self._used is None:
            return ReturnType.OK  # no command yet: leave the interfaces as they are
        else:
            command = self.compute(self._used[0], q, qdot)
        if self.command_interface_name() == EFFORT:
            command = self.limits.saturate_effort(command, q, qdot)
        else:
            previous = np.where(np.isnan(self._previous), q, self._previous)
            command = self.limits.saturate_position(command, previous, period)
        self._previous = command
        self.commands.set(command)
        return ReturnType.OK

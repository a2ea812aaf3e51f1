"""Chained controllers and per-controller update rates in the controller manager (manager.py, chain.py).

Two toy controllers on the two-joint mock arm: ``Exporter`` exports ``<name>/value`` = j1's position + 1 each
update; ``Reader`` reads an exported value (same cycle, or the previous cycle) and writes half of it to
``j1/effort``. Both log the order they ran in, so the tests see what the manager did, not what it claims.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
import pytest
from kinodyn_control.controllers.base import INDIVIDUAL, Controller, InterfaceConfiguration, Parameter
from kinodyn_control.controllers.chainable import ChainableController
from kinodyn_control.hardware.types import LifecycleState, ReturnType
from kinodyn_control.manager import ControllerError
from kinodyn_control.testing import Harness, two_joint_arm

RUNS: list[tuple[str, float, float]] = []  # (controller, time, period) of every update, in order


class Exporter(ChainableController):
    PARAMETERS: ClassVar[dict[str, Parameter]] = {
        "fail": Parameter("bool", False, "return ERROR from update"),
        "reads": Parameter("str", "", "an exported interface read from the previous cycle"),
    }

    def exported_state_interfaces(self) -> tuple[str, ...]:
        return ("value",)

    def state_interface_configuration(self) -> InterfaceConfiguration:
        reads = (self.params["reads"],) if self.params["reads"] else ()
        return InterfaceConfiguration(INDIVIDUAL, ("j1/position", *reads), previous_cycle=reads)

    def update(self, time: float, period: float) -> ReturnType:
        assert self.states is not None
        RUNS.append((self.name, time, period))
        values = self.states.get()
        self.seen = values[1:].tolist()
        self.exported[0] = values[0] + 1.0
        return ReturnType.ERROR if self.params["fail"] else ReturnType.OK


class Reader(ChainableController):
    PARAMETERS: ClassVar[dict[str, Parameter]] = {
        "source": Parameter("str", "exporter/value", "the exported interface read"),
        "previous_cycle": Parameter("bool", False, "read it from the previous cycle"),
    }

    def exported_state_interfaces(self) -> tuple[str, ...]:
        return ("value",)

    def command_interface_configuration(self) -> InterfaceConfiguration:
        return InterfaceConfiguration(INDIVIDUAL, ("j1/effort",))

    def state_interface_configuration(self) -> InterfaceConfiguration:
        source = self.params["source"]
        return InterfaceConfiguration(INDIVIDUAL, (source,),
                                      previous_cycle=(source,) if self.params["previous_cycle"] else ())

    def update(self, time: float, period: float) -> ReturnType:
        assert self.states is not None
        assert self.commands is not None
        RUNS.append((self.name, time, period))
        self.seen = float(self.states.get()[0])
        self.exported[0] = 10.0 * time
        if math.isfinite(self.seen):
            self.commands.set(np.array([0.5 * self.seen]))
        return ReturnType.OK


class Plain(Controller):
    def update(self, time: float, period: float) -> ReturnType:
        RUNS.append((self.name, time, period))
        return ReturnType.OK


class Registry:
    TYPES: ClassVar[dict[str, type]] = {"test/Exporter": Exporter, "test/Reader": Reader, "test/Plain": Plain}

    def create(self, name: str) -> Controller:
        controller: Controller = self.TYPES[name]()
        return controller


@pytest.fixture
def arm() -> Harness:
    RUNS.clear()
    h = two_joint_arm()
    h.manager.registry = Registry()
    h.manager.enter_wall_clock_loop(1.0 / 500)
    return h


def load(h: Harness, name: str, kind: str, **params: object) -> None:
    h.manager.load(name, f"test/{kind}", params)


def order(runs: list) -> list[str]:
    return [name for name, _, _ in runs]


def test_exporters_update_before_their_readers_whatever_the_load_and_switch_order(arm: Harness) -> None:
    load(arm, "reader", "Reader")
    load(arm, "exporter", "Exporter")
    for name in ("reader", "exporter"):
        arm.manager.configure(name)
    ok, message = arm.manager.switch(["reader", "exporter"], [], strictness=2)
    assert ok, message
    arm.manager.cycle(0.0, 0.002)
    assert order(RUNS) == ["exporter", "reader"]
    q = arm.state("j1/position")  # 0.2: the mock's initial position
    reader = arm.manager.controllers["reader"].controller
    assert reader.seen == q + 1.0  # the value its exporter wrote in this very cycle
    assert arm.command("j1/effort") == 0.5 * (q + 1.0)


def test_a_reader_is_not_activated_while_its_exporter_is_inactive(arm: Harness) -> None:
    load(arm, "exporter", "Exporter")
    load(arm, "reader", "Reader")
    for name in ("exporter", "reader"):
        arm.manager.configure(name)
    ok, message = arm.manager.switch(["reader"], [])
    assert not ok
    assert ("Unable to activate controller 'reader' since the state interface 'exporter/value' is not "
            "available (controller 'exporter', which exports it, is inactive)") in message
    assert arm.manager.controllers["reader"].state is LifecycleState.INACTIVE
    # an interface nobody exports is refused at configure, naming it
    load(arm, "orphan", "Reader", source="nobody/value")
    with pytest.raises(ControllerError, match="nobody/value"):
        arm.manager.configure("orphan")


def test_an_exporter_with_active_readers_is_not_deactivated_alone(arm: Harness) -> None:
    load(arm, "exporter", "Exporter")
    load(arm, "reader", "Reader")
    for name in ("exporter", "reader"):
        arm.manager.configure(name)
    assert arm.manager.switch(["exporter", "reader"], [])[0]
    ok, message = arm.manager.switch([], ["exporter"])
    assert not ok
    assert "active controller(s) reader read its state interfaces" in message
    assert arm.manager.controllers["exporter"].state is LifecycleState.ACTIVE
    ok, message = arm.manager.switch([], ["exporter", "reader"])
    assert ok, message
    exported = arm.manager.controllers["exporter"].exported
    assert exported is not None
    assert np.isnan(exported.values).all()  # no stale value for a reader


def test_a_failing_exporter_takes_its_readers_down_in_safe_mode(arm: Harness) -> None:
    load(arm, "exporter", "Exporter", fail=True)
    load(arm, "reader", "Reader")
    load(arm, "bystander", "Plain")
    for name in ("exporter", "reader", "bystander"):
        arm.manager.configure(name)
    assert arm.manager.switch(["exporter", "reader", "bystander"], [])[0]
    arm.set_command("j1/effort", 3.0)
    arm.manager.cycle(0.0, 0.002)
    states = {name: e.state for name, e in arm.manager.controllers.items()}
    assert states == {"exporter": LifecycleState.INACTIVE, "reader": LifecycleState.INACTIVE,
                      "bystander": LifecycleState.ACTIVE}
    assert "reader" not in order(RUNS)  # stopped before its turn in the cycle
    assert arm.command("j1/effort") == 0.0  # the reader's effort in safe mode
    errors = arm.messages("error")
    assert len(errors) == 1
    assert "controller 'exporter' returned ERROR" in errors[0]
    assert "deactivated too: reader" in errors[0]


def test_a_previous_cycle_input_closes_a_loop_one_cycle_late(arm: Harness) -> None:
    # estimator-like: exports value, reads the controller's value from the previous cycle; controller-like:
    # reads the estimator's value in the same cycle, exports its own
    load(arm, "controller", "Reader", source="estimator/value")
    load(arm, "estimator", "Exporter", reads="controller/value")
    for name in ("controller", "estimator"):
        arm.manager.configure(name)
    ok, message = arm.manager.switch(["controller", "estimator"], [], strictness=2)
    assert ok, message
    estimator = arm.manager.controllers["estimator"].controller
    for k in range(3):
        arm.manager.cycle(0.002 * k, 0.002)
    assert order(RUNS) == ["estimator", "controller"] * 3
    assert estimator.seen == [10.0 * 0.002]  # written by the controller in cycle 1, read in cycle 2
    # the controller alone: its input unavailable; the estimator alone: its previous-cycle input is NaN
    assert arm.manager.switch([], ["controller", "estimator"])[0]
    assert not arm.manager.switch(["controller"], [])[0]
    assert arm.manager.switch(["estimator"], [])[0]
    arm.manager.cycle(0.01, 0.002)
    assert np.isnan(estimator.seen).all()


def test_a_loop_of_same_cycle_inputs_is_refused(arm: Harness) -> None:
    load(arm, "a", "Reader", source="b/value")
    load(arm, "b", "Reader", source="a/value")
    for name in ("a", "b"):
        arm.manager.configure(name)
    ok, message = arm.manager.switch(["a", "b"], [])
    assert not ok
    assert "loops" in message
    assert "previous cycle" in message


def test_update_rate_runs_a_controller_every_loop_rate_over_update_rate_cycles(arm: Harness) -> None:
    load(arm, "slow", "Plain", update_rate=100)
    load(arm, "fast", "Plain")
    for name in ("slow", "fast"):
        arm.manager.configure(name)
    assert arm.manager.switch(["slow", "fast"], [])[0]
    for k in range(12):
        arm.manager.cycle(0.002 * k, 0.002)
    slow = [(t, p) for name, t, p in RUNS if name == "slow"]
    assert [t for t, _ in slow] == pytest.approx([0.0, 0.01, 0.02])
    assert [p for _, p in slow] == pytest.approx([0.01, 0.01, 0.01])  # its own period
    assert order(RUNS).count("fast") == 12


@pytest.mark.parametrize("rate", [300, 1000, -5, 2.5])
def test_an_update_rate_that_does_not_divide_the_loop_rate_is_refused(arm: Harness, rate: float) -> None:
    with pytest.raises(ControllerError) as refused:
        load(arm, "bad", "Plain", update_rate=rate)
    text = str(refused.value)
    if isinstance(rate, int) and rate > 0:
        assert f"update_rate {rate} Hz does not divide the loop rate 500 Hz" in text
        assert "250" in text
        assert "100" in text  # the accepted rates are listed
    else:
        assert "update_rate must be an integer >= 0" in text
    assert "bad" not in arm.manager.controllers

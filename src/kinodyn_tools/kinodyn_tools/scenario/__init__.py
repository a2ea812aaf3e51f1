"""Scripted closed-loop scenarios against a live graph, measured from message content
(docs/closed-loop.md)."""

from kinodyn_tools.scenario.metrics import ScenarioResult, StepResult
from kinodyn_tools.scenario.runner import ScenarioRunner, Topics, run_scenario
from kinodyn_tools.scenario.steps import Step, load_steps, random_steps, steps_from_data

__all__ = ["ScenarioResult", "ScenarioRunner", "Step", "StepResult", "Topics", "load_steps", "random_steps",
           "run_scenario", "steps_from_data"]

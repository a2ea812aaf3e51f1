"""Robots shared by the control tests: the project's URDFs (urdf/), the quadruped with its floating base."""

from __future__ import annotations

from pathlib import Path

import pytest
from kinodyn.model import Model

ROOT = Path(__file__).resolve().parents[4]  # the repository
URDF = ROOT / "urdf"


def project_model(name: str) -> Model:
    """The model of ``urdf/<name>.urdf``: floating-base for the quadruped, fixed-base for the others."""
    return Model.from_urdf(URDF / f"{name}.urdf", floating_base=name == "quadruped")


@pytest.fixture(scope="module")
def quadruped() -> Model:
    """The floating-base quadruped of urdf/quadruped.urdf."""
    return project_model("quadruped")

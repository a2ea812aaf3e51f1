"""Fixtures for the kinodyn_control unit tests (the test doubles live in kinodyn_control.testing)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kinodyn_control.testing import Harness

URDF_DIR = Path(__file__).resolve().parents[3] / "urdf"


@pytest.fixture
def harness() -> type[Harness]:
    return Harness


@pytest.fixture
def quadruped_urdf() -> str:
    return (URDF_DIR / "quadruped.urdf").read_text()

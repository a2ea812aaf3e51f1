"""The exception and warning every URDF consumer raises (kinodyn, its nodes, kinodyn_control)."""

from __future__ import annotations


class URDFError(ValueError):
    """The URDF is malformed or uses a feature kinodyn does not model; the one-line message names the
    element and attribute and says what to change."""


class URDFWarning(UserWarning):
    """The URDF is usable but something in it is ignored or physically suspicious."""

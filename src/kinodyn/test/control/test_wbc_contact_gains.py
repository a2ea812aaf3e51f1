"""Contact feedback gains of the whole-body QP (``contacts.py``, as TSID's contact ``Kp``/``Kd``).

The solved tick's contact accelerations are checked against the feedback law written out here with the
model's own kinematics (``frame_placement``, ``frame_jacobian``, ``kinodyn.spatial.so3_log``), not the
controller's evaluation: point contacts on the quadruped, 6-D surface contacts on the generated humanoid
(``urdf/generate.py``). A surface contact's default wrench regularisation is the same QP as a
``ContactForceTask`` of weight ``c / (m g)^2`` per sole. The anchor is the contact frame's pose at the first
tick the contact is in stance and is taken anew when a contact is re-established. Zero gains leave the rows
as they were (the oracle of ``test_wbc_assembly.py`` checks that tick bit for bit).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from kinodyn.control.wbc import PointContact, SurfaceContact, WholeBodyController
from kinodyn.control.wbc.tasks import ComTask, ContactForceTask, PostureTask
from kinodyn.model import Model
from kinodyn.spatial import so3_log

URDF = Path(__file__).resolve().parents[4] / "urdf"
FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
SOLES = ("L_SOLE", "R_SOLE")


def humanoid_urdf() -> str:
    spec = importlib.util.spec_from_file_location("kinodyn_urdf_generate", URDF / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    generate = sys.modules.setdefault(spec.name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(generate)  # (in sys.modules: its dataclasses look their module up)
    return generate.render(generate.humanoid())


@pytest.fixture(scope="module")
def quadruped() -> Model:
    return Model.from_urdf(URDF / "quadruped.urdf", floating_base=True)


@pytest.fixture(scope="module")
def humanoid() -> Model:
    return Model.from_urdf(humanoid_urdf(), floating_base=True)


def standing(model: Model, contacts: list) -> WholeBodyController:
    wbc = WholeBodyController(model, contacts)
    com = ComTask(30.0, 10.0)
    com.set_reference(model.com(model.neutral()))
    wbc.add_task(com)
    wbc.add_task(PostureTask(model, model.neutral()[7:], 10.0, 5.0))
    return wbc


def perturbed(model: Model, q: np.ndarray, rng: np.random.Generator, size: float) -> np.ndarray:
    return model.integrate(q, rng.normal(scale=size, size=model.nv))


def drift(model: Model, q: np.ndarray, anchor: np.ndarray, frame: str, dim: int) -> np.ndarray:
    T = model.frame_placement(q, frame)
    e = T[:3, 3] - anchor[:3, 3]
    return e if dim == 3 else np.r_[e, so3_log(T[:3, :3] @ anchor[:3, :3].T)]


def check_feedback(model: Model, wbc: WholeBodyController, frames: tuple[str, ...], dim: int,
                   kp: float, kd: float, anchors: dict[str, np.ndarray], q: np.ndarray,
                   v: np.ndarray) -> None:
    result = wbc.update(q, v)
    assert result.ok, result.message
    ev = result.evaluation
    for frame in frames:
        J = model.frame_jacobian(q, frame, "local_world_aligned")[:dim]
        wanted = -kp * drift(model, q, anchors[frame], frame, dim) - kd * (J @ v)
        achieved = J @ result.qdd + ev.bias_acceleration(frame)[:dim]
        np.testing.assert_allclose(achieved, wanted, rtol=0.0, atol=1e-8 * max(1.0, np.abs(wanted).max()))
        assert np.abs(wanted).max() > 1e-2  # the feedback is not negligible here
    assert result.contact_acceleration < 1e-8 * max(1.0, np.abs(result.qdd).max())  # against its own rows


@pytest.mark.parametrize("seed", range(3))
def test_point_contacts_follow_the_feedback_law(quadruped: Model, seed: int) -> None:
    rng = np.random.default_rng(seed)
    kp, kd = 100.0, 20.0
    wbc = standing(quadruped, [PointContact(foot, kp=kp, kd=kd) for foot in FEET])
    q0 = quadruped.neutral()
    q0[7:] = [0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2]
    anchors = {foot: quadruped.frame_placement(q0, foot) for foot in FEET}
    first = wbc.update(q0, np.zeros(quadruped.nv))  # the anchors are taken here; no drift, no velocity
    assert first.ok
    for foot in FEET:
        np.testing.assert_allclose(quadruped.frame_jacobian(q0, foot, "local_world_aligned")[:3] @ first.qdd
                                   + first.evaluation.bias_acceleration(foot)[:3], 0.0, atol=1e-9)
    q, v = perturbed(quadruped, q0, rng, 0.02), rng.normal(scale=0.3, size=quadruped.nv)
    check_feedback(quadruped, wbc, FEET, 3, kp, kd, anchors, q, v)


@pytest.mark.parametrize("seed", range(3))
def test_surface_contacts_follow_the_feedback_law_with_orientation(humanoid: Model, seed: int) -> None:
    rng = np.random.default_rng(seed)
    kp, kd = 64.0, 16.0
    contacts = [SurfaceContact(sole, 0.11, 0.055, kp=kp, kd=kd) for sole in SOLES]
    wbc = standing(humanoid, contacts)
    q0 = humanoid.neutral()
    q0[7:] = np.tile([0.0, 0.0, -0.35, 0.7, -0.35, 0.0], 2)
    anchors = {sole: humanoid.frame_placement(q0, sole) for sole in SOLES}
    assert wbc.update(q0, np.zeros(humanoid.nv)).ok
    q, v = perturbed(humanoid, q0, rng, 0.03), rng.normal(scale=0.3, size=humanoid.nv)
    assert all(np.abs(drift(humanoid, q, anchors[s], s, 6)[3:]).max() > 1e-3 for s in SOLES)  # turned
    check_feedback(humanoid, wbc, SOLES, 6, kp, kd, anchors, q, v)


def test_a_re_established_contact_takes_a_new_anchor(quadruped: Model) -> None:
    rng = np.random.default_rng(7)
    kp, kd = 50.0, 0.0
    wbc = standing(quadruped, [PointContact(foot, kp=kp, kd=kd) for foot in FEET])
    q0 = quadruped.neutral()
    q0[7:] = [0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2]
    assert wbc.update(q0, np.zeros(quadruped.nv)).ok
    anchors = {foot: quadruped.frame_placement(q0, foot) for foot in FEET}
    wbc.set_contact_active("LF_FOOT", False)
    q1 = perturbed(quadruped, q0, rng, 0.02)
    assert wbc.update(q1, np.zeros(quadruped.nv)).ok  # three feet
    wbc.set_contact_active("LF_FOOT", True)
    wbc.set_contact_active("LF_FOOT", True)  # already in stance: the anchor stays
    q2 = perturbed(quadruped, q1, rng, 0.02)
    anchors["LF_FOOT"] = quadruped.frame_placement(q2, "LF_FOOT")  # established here
    result = wbc.update(q2, np.zeros(quadruped.nv))
    assert result.ok
    J = quadruped.frame_jacobian(q2, "LF_FOOT", "local_world_aligned")[:3]
    np.testing.assert_allclose(J @ result.qdd + result.evaluation.bias_acceleration("LF_FOOT")[:3], 0.0,
                               atol=1e-9)
    check_feedback(quadruped, wbc, FEET[1:], 3, kp, kd, anchors, q2, np.zeros(quadruped.nv))


@pytest.mark.parametrize("gains", [{"kp": -1.0}, {"kd": math.nan}, {"kp": math.inf}, {"kd": "5"}])
def test_gains_are_validated(gains: dict) -> None:
    with pytest.raises(ValueError, match=r"k[pd] must be a finite number >= 0"):
        PointContact("LF_FOOT", **gains)
    with pytest.raises(ValueError, match=r"k[pd] must be a finite number >= 0"):
        SurfaceContact("L_SOLE", 0.1, 0.05, **gains)


def test_zero_gains_add_no_feedback_rows(quadruped: Model) -> None:
    wbc = standing(quadruped, [PointContact(foot, kd=0.0 if foot != "LH_FOOT" else 3.0) for foot in FEET])
    q0 = quadruped.neutral()
    assert wbc.update(q0, np.zeros(quadruped.nv)).ok
    (asm,) = wbc._assemblies.values()  # noqa: SLF001  (the cached assembly)
    assert [k for k, _ in asm.feedback] == [FEET.index("LH_FOOT")]
    assert asm.feedback[0][1] == slice(3, 6)


def test_gains_and_regularization_defaults() -> None:
    point, surface = PointContact("LF_FOOT"), SurfaceContact("L_SOLE", 0.1, 0.05)
    assert (point.kp, point.kd, point.force_regularization) == (0.0, 0.0, 0.0)  # rows and cost as before
    w = surface.kp ** 0.5
    assert w > 0.0
    assert surface.kd == pytest.approx(2.0 * w)
    assert surface.force_regularization > 0.0
    with pytest.raises(ValueError, match="force_regularization must be a finite number >= 0"):
        SurfaceContact("L_SOLE", 0.1, 0.05, force_regularization=-1.0)


@pytest.mark.parametrize("seed", range(3))
def test_wrench_regularization_is_a_force_task_of_weight_c_over_weight_squared(humanoid: Model,
                                                                               seed: int) -> None:
    rng = np.random.default_rng(seed)
    c = 10.0
    weight = float(humanoid.mass[1:].sum()) * 9.81
    built = standing(humanoid, [SurfaceContact(sole, 0.11, 0.055, force_regularization=c) for sole in SOLES])
    explicit = standing(humanoid, [SurfaceContact(sole, 0.11, 0.055, force_regularization=0.0)
                                   for sole in SOLES])
    for sole in SOLES:
        explicit.add_task(ContactForceTask(sole, 6, weight=c / weight**2))
    q0 = humanoid.neutral()
    q0[7:] = np.tile([0.0, 0.0, -0.35, 0.7, -0.35, 0.0], 2)
    for wbc in (built, explicit):
        assert wbc.update(q0, np.zeros(humanoid.nv)).ok  # the anchors
    q, v = perturbed(humanoid, q0, rng, 0.02), rng.normal(scale=0.2, size=humanoid.nv)
    first, second = built.update(q, v), explicit.update(q, v)
    assert first.ok
    assert second.ok
    np.testing.assert_allclose(first.qdd, second.qdd, rtol=0.0, atol=1e-7)
    for sole in SOLES:
        np.testing.assert_allclose(first.forces[sole], second.forces[sole], rtol=0.0, atol=1e-6)

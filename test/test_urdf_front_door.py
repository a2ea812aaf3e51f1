"""One URDF front door: the malformed-URDF corpus through every consumer, in process.

Every consumer reads the URDF through ``kinodyn.urdf.read_urdf``; this test does not trust that, it calls each
consumer's own entry point on every case of ``test/urdf_corpus.py`` and asserts the same verdict and the same
one-line message: ``kinodyn.Model.from_urdf``, ``state_publisher``'s TF tree, control_node's
``<ros2_control>`` and limit parser, the simulator's contact spheres, SimulatedSystem brought to active by
the resource manager, and the nodes' loader (the file read as ``robot_description_file``, then the model).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
import pytest
from kinodyn.urdf import read_urdf
from kinodyn_common.robot_description import load_urdf, read_robot_description
from kinodyn_common.tf_tree import TfTree
from kinodyn_control.hardware.description import parse_robot_description
from kinodyn_control.testing import Harness

import kinodyn as kd
from kinodyn import URDFError, URDFWarning, sim
from test.urdf_corpus import BASE, REFUSED, WARNED  # pytest --import-mode=importlib names it so

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def _simulated_system(urdf: str | bytes) -> object:
    harness = Harness(urdf)  # type: ignore[arg-type]
    harness.activate_hardware()
    return harness


def _node_loader(urdf: str | bytes, tmp_path: Path) -> object:
    """What every node does with ``robot_description_file`` (``declare_and_read``, ``load_urdf``, then its
    model), minus the source prefix."""
    path = tmp_path / "robot.urdf"
    path.write_bytes(urdf if isinstance(urdf, bytes) else urdf.encode())
    prefix = f"robot_description_file {str(path)!r} is not a usable URDF: "
    try:
        text, source = read_robot_description("", str(path))
        return kd.Model.from_urdf(load_urdf(text, source))
    except URDFError as exc:
        message = str(exc)
    assert message.startswith(prefix), message
    raise URDFError(message[len(prefix):])


def consumers(tmp_path: Path) -> dict[str, Callable[[str | bytes], object]]:
    return {
        "Model.from_urdf": kd.Model.from_urdf,  # type: ignore[dict-item]
        "TfTree.from_urdf": TfTree.from_urdf,
        "parse_robot_description": parse_robot_description,  # type: ignore[dict-item]
        "collision_spheres": sim.collision_spheres,  # type: ignore[dict-item]
        "SimulatedSystem": _simulated_system,
        "node loader": lambda urdf: _node_loader(urdf, tmp_path),
    }


def test_corpus_is_large_and_every_case_differs_from_the_base() -> None:
    assert len(REFUSED) >= 40
    assert all(urdf != BASE for urdf, _ in REFUSED.values())


def test_base_is_accepted_by_every_consumer(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = {name: consume(BASE) for name, consume in consumers(tmp_path).items()}
    model = results["Model.from_urdf"]
    assert isinstance(model, kd.Model)
    assert model.joint_names == ("j1", "j2")
    np.testing.assert_array_equal(model.effort_limit, [10.0, 5.0])
    assert results["TfTree.from_urdf"].movable_joint_names == ("j1", "j2")  # type: ignore[attr-defined]
    assert results["parse_robot_description"].joint_limits["j2"].upper == 2.0  # type: ignore[attr-defined]
    assert results["collision_spheres"] == (sim.ContactSphere("base", (0.0, 0.0, -0.05), 0.05),)
    assert results["SimulatedSystem"].state("j1/position") == pytest.approx(0.1)  # type: ignore[attr-defined]


def test_an_empty_texture_is_read_as_none_like_pinocchio(tmp_path: Path) -> None:
    """A material's ``<texture/>`` without a filename (iCub's URDFs carry them; urdf_parser_py alone refuses
    it): every consumer accepts it without a warning, as Pinocchio (urdfdom) does, and the viewer's colour
    stays; a texture with a file is kept."""
    visual = ('<visual><geometry><box size="0.1 0.1 0.1"/></geometry><material name="metal">'
              '<color rgba="0.5 0.5 0.5 1"/>{}</material></visual></link>')
    lower = '<link name="lower">' + BASE.split('<link name="lower">')[1].split("</link>")[0]
    for texture, kept in (("<texture/>", None), ('<texture filename="metal.png"/>', "metal.png")):
        urdf = BASE.replace(lower + "</link>", lower + visual.format(texture))
        assert urdf != BASE
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for consume in consumers(tmp_path).values():
                consume(urdf)
        (material,) = [v.material for link in read_urdf(urdf).robot.links for v in link.visuals]
        assert material.color.rgba == [0.5, 0.5, 0.5, 1.0]
        assert (material.texture.filename if material.texture is not None else None) == kept
        assert pin.buildModelFromXML(urdf).nq == kd.Model.from_urdf(urdf).nq == 2


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_every_consumer_refuses_with_the_same_message(case: str, tmp_path: Path) -> None:
    urdf, expected = REFUSED[case]
    messages = {}
    for name, consume in consumers(tmp_path).items():
        with pytest.raises(URDFError) as info:
            consume(urdf)
        messages[name] = str(info.value)
    assert set(messages.values()) == {expected}, messages
    assert "\n" not in expected


@pytest.mark.parametrize("case", sorted(WARNED))
def test_every_consumer_accepts_with_one_warning(case: str, tmp_path: Path) -> None:
    urdf, expected = WARNED[case]
    for name, consume in consumers(tmp_path).items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            consume(urdf)
        assert [str(w.message) for w in caught] == [expected], name
        assert all(w.category is URDFWarning for w in caught), name


def test_mimic_in_fixed_joint_is_ignored_like_pinocchio() -> None:
    """Second source: Pinocchio builds the same model from the same file (the mimic of a fixed joint
    ignored)."""
    urdf, _ = WARNED["mimic_in_fixed_joint"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        model = kd.Model.from_urdf(urdf)
    reference = pin.buildModelFromXML(urdf)
    data = reference.createData()
    q = np.array([0.3, -0.7])
    tau = pin.rnea(reference, data, q, np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(model.gravity_torques(q), tau, rtol=0, atol=1e-12)
    assert reference.nq == model.nq == 2

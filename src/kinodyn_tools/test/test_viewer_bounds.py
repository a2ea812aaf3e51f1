"""The viewer refuses finite but absurd contact and foothold values like non-finite ones, and draws at most
``max_drawn_contacts`` arrows of a huge contact set (kinodyn_tools/viewer/scene.py)."""

from __future__ import annotations

import numpy as np
import pytest
from geometry_msgs.msg import Point, Vector3
from kinodyn_common.cdr import contact_arrays_from_cdr
from kinodyn_common.conversions import InputError
from kinodyn_tools.viewer.scene import check_bounded, evenly_picked, force_arrows, support_polygon
from rclpy.serialization import serialize_message
from scipy.spatial import ConvexHull

from kinodyn_interfaces.msg import ContactStates


def test_absurd_values_are_refused_and_5000_contacts_drawn_as_64_arrows() -> None:
    physical = np.array([[0.3, -0.2, 0.0], [1e4 / np.sqrt(3)] * 3])  # on the bound: taken
    check_bounded("contacts", "ContactStates point", physical, 1e4, "m", "max_position")
    for absurd in (1e308, -1e308, 1e6 + 1.0):
        values = np.array([[0.0, 0.0, 0.0], [0.0, absurd, 0.0]])
        with pytest.raises(InputError) as refused:
            check_bounded("contacts", "ContactStates force", values, 1e6, "N", "max_force")
        assert refused.value.kind == "contacts_out_of_range"
        assert "max_force" in str(refused.value)
        assert f"{abs(absurd):.3g} N" in str(refused.value)

    rng = np.random.default_rng(5)
    points = np.c_[rng.uniform(-1.0, 1.0, (5000, 2)), np.zeros(5000)]
    forces = np.c_[np.zeros((5000, 2)), rng.uniform(1.0, 50.0, 5000)]
    arrows = force_arrows(points, forces, [True] * 5000, 0.003)
    drawn = evenly_picked(arrows, 64)
    assert drawn.shape == (64, 2, 3)
    np.testing.assert_array_equal(drawn[0], arrows[0])
    np.testing.assert_array_equal(drawn[-1], arrows[-1])
    assert {tuple(a.ravel()) for a in drawn} <= {tuple(a.ravel()) for a in arrows}
    assert evenly_picked(arrows[:10], 64) is not None
    assert len(evenly_picked(arrows[:10], 64)) == 10
    # the polygon still uses every contact: the same hull as scipy's Qhull
    for cloud in (points, np.c_[rng.normal(size=(5000, 2)), np.zeros(5000)]):  # a square, a round cloud
        polygon = support_polygon(cloud)
        qhull = cloud[ConvexHull(cloud[:, :2]).vertices]
        assert {tuple(p) for p in polygon} == {tuple(p) for p in qhull}


def test_contact_arrays_decode_what_rclpy_serializes() -> None:
    """The viewer's ContactStates decoder gives rclpy's values (5000 contacts, then a message with arrays of
    different lengths, which the viewer refuses by their counts), and refuses bytes cut short."""
    rng = np.random.default_rng(7)
    values = rng.normal(size=(5000, 6))
    flags = rng.random(5000) < 0.5
    msg = ContactStates(names=[f"sphere_{k}" for k in range(5000)], in_contact=flags.tolist(),
                        points=[Point(x=a, y=b, z=c) for a, b, c in values[:, :3]],
                        forces=[Vector3(x=a, y=b, z=c) for a, b, c in values[:, 3:]])
    msg.header.frame_id = "world"
    arrays = contact_arrays_from_cdr(serialize_message(msg))
    assert (arrays.frame_id, arrays.names) == ("world", 5000)
    np.testing.assert_array_equal(arrays.in_contact, flags)
    np.testing.assert_array_equal(arrays.points, values[:, :3])
    np.testing.assert_array_equal(arrays.forces, values[:, 3:])
    uneven = ContactStates(names=["a", "b"], in_contact=[True], points=[Point()], forces=[])
    arrays = contact_arrays_from_cdr(serialize_message(uneven))
    assert (arrays.names, len(arrays.in_contact), len(arrays.points), len(arrays.forces)) == (2, 1, 1, 0)
    with pytest.raises(ValueError, match="cut short"):
        contact_arrays_from_cdr(serialize_message(msg)[:1000])

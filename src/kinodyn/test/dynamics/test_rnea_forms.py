"""``dynamics.rnea``'s two forms of the recursion, ``rnea_local`` (written with the spatial algebra's helpers)
and ``rnea_local_unrolled`` (written out on scalars, what the kernels run), give the same efforts: fixed and
floating base, mimic joints, prismatic joints, external wrenches."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kinodyn.dynamics.rnea import rnea_local, rnea_local_unrolled, rnea_scratch
from kinodyn.kernel_data import unpack
from numba import njit

import kinodyn as kd

from ..urdf_text import inertial_link

ROOT = Path(__file__).resolve().parents[4]
MIMIC = f"""<robot name="mimic">
  {inertial_link("base", 2.0, (0.02, 0, 0, 0.03, 0, 0.025))}
  {inertial_link("a", 1.2, (0.01, 0.001, 0, 0.02, 0.002, 0.015), "0.1 0 0.02")}
  {inertial_link("b", 0.7, (0.005, 0, 0.0005, 0.004, 0, 0.006), "0 0.05 0.1")}
  {inertial_link("c", 0.4, (0.002, 0, 0, 0.003, 0, 0.002), "0.02 0 0.03")}
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 0 0.1" rpy="0.2 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <joint name="j2" type="prismatic"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0" rpy="0 0.3 0"/>
    <axis xyz="0.6 0.8 0"/><limit lower="-1" upper="1" effort="10" velocity="10"/></joint>
  <joint name="j3" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0 0.2 0"/>
    <axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="10" velocity="10"/>
    <mimic joint="j1" multiplier="-1.5" offset="0.1"/></joint>
</robot>"""


@njit(cache=True)
def _both(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, a: np.ndarray, fext: np.ndarray,
          out: np.ndarray) -> None:
    md = unpack(ki, kf)
    L, spatial, _ = rnea_scratch(md, np.empty(0))
    rnea_local(md, L, q, v, a, fext, spatial, out[0])
    rnea_local_unrolled(md, L, q, v, a, fext, spatial, out[1])


@pytest.mark.parametrize(("urdf", "floating"),
                         [("quadruped.urdf", True), ("arm7.urdf", False), (MIMIC, False), (MIMIC, True)])
def test_the_two_forms_agree(urdf: str, floating: bool) -> None:
    model = kd.Model.from_urdf(urdf if urdf.startswith("<") else ROOT / "urdf" / urdf, floating_base=floating)
    assert bool(model.mimic_joint_names) == urdf.startswith("<")
    ki, kf = model.kernel_data
    rng = np.random.default_rng(5)
    for with_fext in (False, True, False, True):
        q, v, a = model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
        fext = rng.normal(size=(model.nbodies, 6)) if with_fext else np.zeros((0, 6))
        out = np.empty((2, model.nv))
        _both(ki, kf, q, v, a, fext, out)
        scale = 1.0 + np.max(np.abs(out[1]))
        np.testing.assert_allclose(out[0], out[1], rtol=0.0, atol=1e-13 * scale)
        assert np.max(np.abs(out[1])) > 0.1  # a comparison of something

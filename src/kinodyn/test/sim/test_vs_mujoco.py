"""The 2-link arm (urdf/planar_2link.urdf) without contacts against MuJoCo loading the same URDF, with
the same integrator and time step: q(t) agrees to 1e-6 over 1 s (MuJoCo is a test-only dependency)."""

from __future__ import annotations

import re

import mujoco
import numpy as np
import pytest

import kinodyn as kd
from kinodyn import sim

from .conftest import PLANAR_URDF

MUJOCO_INTEGRATOR = {"rk4": mujoco.mjtIntegrator.mjINT_RK4,
                     "semi_implicit_euler": mujoco.mjtIntegrator.mjINT_EULER}


def mujoco_model(urdf_text: str, dt: float, integrator: str) -> mujoco.MjModel:
    """MuJoCo model of a URDF: inertias as written, no contacts or constraints, kinodyn's gravity."""
    text = re.sub(r"<ros2_control.*?</ros2_control>", "", urdf_text, flags=re.S)
    text = text.replace("</robot>", '<mujoco><compiler discardvisual="true" fusestatic="false" '
                                    'balanceinertia="false"/></mujoco></robot>')
    model = mujoco.MjModel.from_xml_string(text)
    model.opt.timestep = dt
    model.opt.integrator = MUJOCO_INTEGRATOR[integrator]
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    return model


@pytest.mark.parametrize("integrator", sim.INTEGRATORS)
def test_planar_arm_matches_mujoco(integrator: str) -> None:
    dt, seconds = 1e-3, 1.0
    m = kd.Model.from_urdf(PLANAR_URDF)
    mj = mujoco_model(PLANAR_URDF.read_text(), dt, integrator)
    np.testing.assert_allclose(mj.opt.gravity, m.gravity)
    order = [mj.joint(name).qposadr[0] for name in m.joint_names]  # MuJoCo index of each kinodyn joint
    data = mujoco.MjData(mj)
    q0, v0, tau = np.array([0.3, -0.5]), np.array([1.0, 2.0]), np.array([4.0, -1.5])
    data.qpos[order], data.qvel[order], data.qfrc_applied[order] = q0, v0, tau
    s = sim.Simulator(m, dt=dt, integrator=integrator, joint_limits=False)  # as MuJoCo without constraints
    s.reset(q0, v0)
    worst = 0.0
    for _ in range(round(seconds / dt)):
        s.step(tau)
        mujoco.mj_step(mj, data)
        worst = max(worst, np.abs(s.q - data.qpos[order]).max())
    print(f"\n{integrator}: max |q - q_mujoco| over {seconds} s = {worst:.2e} rad")
    assert worst < 1e-6
    np.testing.assert_allclose(s.v, data.qvel[order], rtol=0, atol=1e-6)
    assert np.abs(s.q - q0).max() > 0.5  # the arm really moved

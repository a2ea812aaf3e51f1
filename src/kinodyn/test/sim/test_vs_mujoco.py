"""The 2-link arm (urdf/planar_2link.urdf) without contacts against MuJoCo loading the same URDF, with
the same integrator and time step: q(t) and v(t) agree to rounding over 1 s (MuJoCo is a test-only
dependency). Measured: |q - q_mujoco| 3.5e-15 rad and |v - v_mujoco| 3.9e-14 rad/s with RK4, 1.4e-14 rad
and 1.7e-13 rad/s with semi-implicit Euler."""

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


# the largest |q - q_mujoco| [rad] and |v - v_mujoco| [rad/s] over 1 s: a few times the measured values
BOUND = {"rk4": (1e-14, 1e-13), "semi_implicit_euler": (5e-14, 5e-13)}


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
    worst_q = worst_v = 0.0
    for _ in range(round(seconds / dt)):
        s.step(tau)
        mujoco.mj_step(mj, data)
        worst_q = max(worst_q, np.abs(s.q - data.qpos[order]).max())
        worst_v = max(worst_v, np.abs(s.v - data.qvel[order]).max())
    print(f"\n{integrator}: over {seconds} s, max |q - q_mujoco| = {worst_q:.2e} rad, "
          f"max |v - v_mujoco| = {worst_v:.2e} rad/s")
    bound_q, bound_v = BOUND[integrator]
    assert worst_q <= bound_q
    assert worst_v <= bound_v
    assert np.abs(s.q - q0).max() > 0.5  # the arm really moved

"""Simulator benchmark: the quadruped standing on four feet at 1 kHz, kinodyn.sim against MuJoCo's mj_step.

Both load urdf/quadruped.urdf (MuJoCo: through its URDF importer, a free joint added to the base, a
ground plane, contacts only between the foot spheres and the plane), start in the nominal standing
pose and run the same joint PD law. Prints:

- simulated seconds per wall second of ``Simulator.step`` (RK4 and semi-implicit Euler) with the PD
  law computed in Python every step, as a user's loop runs it;
- the per-step time of ``Simulator.step`` and of the compiled step kernel alone, next to ``mj_step``
  with MuJoCo's RK4 and Euler integrators, and the ratio kinodyn / MuJoCo (target: at most 10).

    python bench/bench_sim.py

Times are medians over interleaved rounds (the machine may be loaded by other processes: compare the
ratios of one run).
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import mujoco
import numpy as np
from kinodyn.sim import kernels

import kinodyn as kd
from kinodyn import sim

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "urdf" / "quadruped.urdf"
STANDING = np.array([0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2])
HEIGHT = 0.5252
KP, KD = 800.0, 10.0
DT = 1e-3
SETTLE_STEPS = 1000
CONTACT_GEOMS = (int(mujoco.mjtGeom.mjGEOM_SPHERE), int(mujoco.mjtGeom.mjGEOM_PLANE))
MUJOCO_INTEGRATORS = {"rk4": mujoco.mjtIntegrator.mjINT_RK4,
                      "semi_implicit_euler": mujoco.mjtIntegrator.mjINT_EULER}


def mujoco_quadruped(integrator: str) -> tuple[mujoco.MjModel, list[int], list[int]]:
    """MuJoCo model of the URDF on a ground plane, and the qpos / qvel addresses of kinodyn's joints."""
    text = re.sub(r"<ros2_control.*?</ros2_control>", "", URDF.read_text(), flags=re.S)
    text = text.replace("</robot>", '<mujoco><compiler discardvisual="true" fusestatic="false" '
                                    'balanceinertia="false"/></mujoco></robot>')
    imported = mujoco.MjModel.from_xml_string(text)
    path = Path("/tmp") / f"kinodyn_bench_quadruped_{id(imported)}.xml"
    mujoco.mj_saveLastXML(str(path), imported)
    mjcf = path.read_text()
    path.unlink()
    mjcf = mjcf.replace('<body name="base_link"', '<body name="base_link" pos="0 0 0"', 1)
    mjcf = re.sub(r'(<body name="base_link"[^>]*>)', r"\1<freejoint/>", mjcf, count=1)
    mjcf = mjcf.replace("<worldbody>", '<worldbody><geom name="ground" type="plane" size="0 0 1"/>', 1)
    model = mujoco.MjModel.from_xml_string(mjcf)
    model.opt.timestep = DT
    model.opt.integrator = MUJOCO_INTEGRATORS[integrator]
    for g in range(model.ngeom):
        touches = int(model.geom_type[g]) in CONTACT_GEOMS
        model.geom_contype[g] = model.geom_conaffinity[g] = 1 if touches else 0
    m = kd.Model.from_urdf(URDF, floating_base=True)
    qadr = [model.joint(name).qposadr[0] for name in m.joint_names]
    vadr = [model.joint(name).dofadr[0] for name in m.joint_names]
    return model, qadr, vadr


def kinodyn_standing(integrator: str) -> sim.Simulator:
    m = kd.Model.from_urdf(URDF, floating_base=True)
    s = sim.Simulator(m, dt=DT, integrator=integrator, contact=sim.ContactModel(sim.collision_spheres(URDF)))
    q = m.neutral()
    q[2] = HEIGHT
    q[7:] = STANDING
    s.reset(q)
    for _ in range(SETTLE_STEPS):
        s.step(KP * (STANDING - s.q[7:]) - KD * s.v[6:])
    assert s.in_contact.all(), "kinodyn: the quadruped must stand on four feet"
    return s


def mujoco_standing(integrator: str) -> tuple[mujoco.MjModel, mujoco.MjData, Callable[[], None]]:
    model, qadr, vadr = mujoco_quadruped(integrator)
    data = mujoco.MjData(model)
    data.qpos[:3] = [0.0, 0.0, HEIGHT]
    data.qpos[3:7] = [1.0, 0.0, 0.0, 0.0]  # MuJoCo quaternions are (w, x, y, z)
    data.qpos[qadr] = STANDING

    def control_and_step() -> None:
        data.qfrc_applied[vadr] = KP * (STANDING - data.qpos[qadr]) - KD * data.qvel[vadr]
        mujoco.mj_step(model, data)

    for _ in range(SETTLE_STEPS):
        control_and_step()
    assert data.ncon == 4, f"MuJoCo: expected 4 foot contacts, got {data.ncon}"
    return model, data, control_and_step


def median_step_us(fn: Callable[[], object], steps: int = 500, rounds: int = 15) -> list[float]:
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()
        out.append((time.perf_counter() - t0) / steps * 1e6)
    return out


def main() -> None:
    print(f"quadruped (urdf/quadruped.urdf, 12 joints, 4 foot contacts), dt = {DT * 1e3:g} ms, joint PD")
    print(f"{'integrator':<22}{'kinodyn step':>14}{'kernel only':>13}{'mj_step':>11}"
          f"{'step / mj':>11}{'kernel / mj':>13}{'sim s / wall s':>16}")
    for integrator in sim.INTEGRATORS:
        s = kinodyn_standing(integrator)
        _, _, mj_step = mujoco_standing(integrator)
        ki, kf = s.model.kernel_data
        body, offset, radius = s._spheres
        tau = np.zeros(s.model.nv)
        tau[6:] = KP * (STANDING - s.q[7:]) - KD * s.v[6:]
        q_out, v_out = np.empty(s.model.nq), np.empty(s.model.nv)
        forces, points = np.empty((4, 3)), np.empty((4, 3))
        anchors = s._anchors.copy()

        def kernel_only(s=s, tau=tau, anchors=anchors, q_out=q_out, v_out=v_out, forces=forces, points=points,
                        ki=ki, kf=kf, body=body, offset=offset, radius=radius) -> None:
            kernels.step(ki, kf, s.q, s.v, tau, DT, s._rk4, True, s._damping, s._friction, s._params, anchors,
                         body, offset, radius, *s._push_arrays, False, q_out, v_out, forces, points)

        def user_step(s=s) -> None:
            s.step(KP * (STANDING - s.q[7:]) - KD * s.v[6:])

        ours, kernel, theirs = [], [], []
        for _ in range(5):  # interleaved rounds
            ours += median_step_us(user_step, rounds=3)
            kernel += median_step_us(kernel_only, rounds=3)
            theirs += median_step_us(mj_step, rounds=3)
        assert s.in_contact.all()
        o, k, t = statistics.median(ours), statistics.median(kernel), statistics.median(theirs)
        print(f"{integrator:<22}{o:>11.1f} us{k:>10.1f} us{t:>8.1f} us{o / t:>10.1f}x{k / t:>12.1f}x"
              f"{1e3 / o:>16.1f}")
    print("kinodyn step = Simulator.step with the PD law in Python (the user's loop); mj_step includes the "
          "same PD law.\nkernel only = kinodyn.sim.kernels.step (integrator, contact, ABA), "
          "no Python around it.")


if __name__ == "__main__":
    main()

"""Torque-level simulation (no ROS): forward dynamics under joint friction, ground contact, joint limits
and pushes, integrated by RK4 or semi-implicit Euler; an IMU model. Two physics backends behind one
protocol (``PhysicsBackend``): kinodyn's ``Simulator`` and MuJoCo (``mujoco_backend``, imported on demand).

```python
sim = kd.sim.Simulator(m, dt=1e-3, integrator="rk4",
                       contact=kd.sim.ContactModel(kd.sim.collision_spheres("urdf/quadruped.urdf")))
sim = kd.sim.create_backend("mujoco", "urdf/quadruped.urdf", m, dt=1e-3, contact=...)  # the same protocol
sim.reset(q, v); sim.step(tau); sim.q, sim.v, sim.t
```
"""

from kinodyn.sim.backend import BACKENDS, PhysicsBackend, create_backend
from kinodyn.sim.collision import ContactSphere, collision_spheres
from kinodyn.sim.contact import ContactGains, ContactModel
from kinodyn.sim.impulse import inelastic_impulse
from kinodyn.sim.imu import ImuNoise, ImuReading, ImuSensor
from kinodyn.sim.simulator import INTEGRATORS, Simulator

__all__ = [
    "BACKENDS",
    "INTEGRATORS",
    "ContactGains",
    "ContactModel",
    "ContactSphere",
    "ImuNoise",
    "ImuReading",
    "ImuSensor",
    "PhysicsBackend",
    "Simulator",
    "collision_spheres",
    "create_backend",
    "inelastic_impulse",
]

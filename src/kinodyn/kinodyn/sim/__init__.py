"""Torque-level simulation (no ROS): forward dynamics under joint friction, ground contact, joint limits
and pushes, integrated by RK4 or semi-implicit Euler; an IMU model.

```python
sim = kd.sim.Simulator(m, dt=1e-3, integrator="rk4",
                       contact=kd.sim.ContactModel(kd.sim.collision_spheres("urdf/quadruped.urdf")))
sim.reset(q, v); sim.step(tau); sim.q, sim.v, sim.t
```
"""

from kinodyn.sim.collision import ContactSphere, collision_spheres
from kinodyn.sim.contact import ContactModel
from kinodyn.sim.impulse import inelastic_impulse
from kinodyn.sim.imu import ImuNoise, ImuReading, ImuSensor
from kinodyn.sim.simulator import INTEGRATORS, Simulator

__all__ = [
    "INTEGRATORS",
    "ContactModel",
    "ContactSphere",
    "ImuNoise",
    "ImuReading",
    "ImuSensor",
    "Simulator",
    "collision_spheres",
    "inelastic_impulse",
]

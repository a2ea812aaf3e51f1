"""Torque-level simulation (no ROS): forward dynamics under joint friction, ground contact, joint limits
and pushes, integrated by RK4 or semi-implicit Euler; an IMU model. Physics backends behind one protocol
(``PhysicsBackend``), registered by name with their capabilities (``register_backend``, ``backend_names``,
``backend_capabilities``): kinodyn's ``Simulator`` and MuJoCo (``mujoco_backend``, imported on demand).

```python
sim = kd.sim.Simulator(m, dt=1e-3, integrator="rk4",
                       contact=kd.sim.ContactModel(kd.sim.collision_spheres("urdf/quadruped.urdf")))
sim = kd.sim.create_backend("mujoco", "urdf/quadruped.urdf", m, dt=1e-3, contact=...)  # the same protocol
sim.reset(q, v); sim.step(tau); sim.q, sim.v, sim.t
```
"""

from kinodyn.sim.backend import (
    DEFAULT_BACKEND,
    BackendCapabilities,
    BackendFactory,
    PhysicsBackend,
    backend_capabilities,
    backend_names,
    create_backend,
    lazy,
    register_backend,
    unregister_backend,
)
from kinodyn.sim.collision import ContactSphere, collision_spheres
from kinodyn.sim.contact import ContactGains, ContactModel
from kinodyn.sim.impulse import inelastic_impulse
from kinodyn.sim.imu import ImuNoise, ImuReading, ImuSensor
from kinodyn.sim.simulator import INTEGRATORS, Simulator

__all__ = [
    "DEFAULT_BACKEND",
    "INTEGRATORS",
    "BackendCapabilities",
    "BackendFactory",
    "ContactGains",
    "ContactModel",
    "ContactSphere",
    "ImuNoise",
    "ImuReading",
    "ImuSensor",
    "PhysicsBackend",
    "Simulator",
    "backend_capabilities",
    "backend_names",
    "collision_spheres",
    "create_backend",
    "inelastic_impulse",
    "lazy",
    "register_backend",
    "unregister_backend",
]

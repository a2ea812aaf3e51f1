"""Body-frame spatial quantities shared by the body-frame dynamics kernels (RNEA, ABA).

Every 6-D vector of body i is in body i's axes, the linear part taken at its origin:
twists ``V_i = [v; w]``, accelerations, wrenches ``[f; n]`` (Modern Robotics, §8.3.2, where each link
has its own frame {i}; reordered linear-first). A rigid-body inertia is then constant:
``(m, h, I_o)`` with ``h = m c`` and ``I_o = I_c + m (|c|^2 E - c c^T)`` about the body origin
(Steiner, Modern Robotics, (8.26)-(8.27)). Between a body and its parent, placed by ``E = C_parent_i``
(``C_pj L``, ``L`` from ``common.joint_displacement``) and the origin ``p`` in parent coordinates,
motion vectors map by ``Ad_{T_i,parent}``: ``[E^T (v + w x p); E^T w]``, and wrenches by its transpose:
``[E f; E n + p x E f]`` (Modern Robotics, (8.50)-(8.54)). Joint columns in body axes (body frame = joint
frame): revolute ``[0; n]``, prismatic ``[n; 0]``, free flyer the identity (its v is the body twist,
Robot Dynamics lecture notes (ETH), §2.10.3). ``dyn_rnea.rnea_local`` writes these maps out on scalars.

``allocate_local_bodies(md) -> LocalBodies`` (``njit(cache=True, inline="always")``): scratch for
the transforms, with the constant body-frame inertias filled in; ``local_bodies_in(md, block)`` the
same in the first ``24 nb`` entries of a given array.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from kinodyn._kernels.common import ModelArrays, matrices_view, rows_view
from kinodyn._kernels.dyn_world import inline

LocalBodies = namedtuple("LocalBodies", ["E", "p", "h", "inertia"])
LocalBodies.__doc__ = """Parent <- body transforms and body-frame inertias.

``E`` (nb,3,3) ``= C_parent_i``, ``p`` (nb,3) body i's origin in parent coordinates (row 0 unused);
``h`` (nb,3), ``inertia`` (nb,3,3): first moment and rotational inertia about the body origin in
body axes (the mass is ``md.mass``).
"""


@inline
def allocate_local_bodies(md: ModelArrays) -> LocalBodies:
    """``LocalBodies`` for ``md`` in one allocation: ``h`` and ``inertia`` set, ``E`` and ``p`` not."""
    return local_bodies_in(md, np.empty(24 * md.nbodies))


@inline
def local_bodies_in(md: ModelArrays, block: np.ndarray) -> LocalBodies:
    """``LocalBodies`` as views of ``block[:24 nb]``, with ``h`` and ``inertia`` set."""
    nb = md.nbodies
    L = LocalBodies(matrices_view(block, 0, nb), rows_view(block, 9 * nb, nb, 3),
                    rows_view(block, 12 * nb, nb, 3), matrices_view(block, 15 * nb, nb))
    mass, com, Ic, h, I_o = md.mass, md.body_com, md.inertia, L.h, L.inertia
    for i in range(nb):
        m = mass[i]
        c0, c1, c2 = com[i, 0], com[i, 1], com[i, 2]
        h[i, 0], h[i, 1], h[i, 2] = m * c0, m * c1, m * c2
        cc = c0 * c0 + c1 * c1 + c2 * c2
        for a in range(3):
            for b in range(3):
                I_o[i, a, b] = Ic[i, a, b] - h[i, a] * com[i, b] + (m * cc if a == b else 0.0)
    return L

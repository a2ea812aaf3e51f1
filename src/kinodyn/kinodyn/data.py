"""``Data``: the buffers and results of one model at one configuration (Pinocchio's Model/Data split).

``model.create_data(frames)`` allocates once every array the algorithms write, and the compiled scratch
they use. An algorithm takes it as the keyword ``data=`` after its usual arguments::

    data = model.create_data()
    tau = kinodyn.dynamics.rnea(model, q, v, a, data=data)  # or model.rnea(q, v, a, data=data)

rather than Pinocchio's positional ``rnea(model, data, q, v, a)``: the calls without a Data keep their
signature, so every existing caller and the ``Model`` methods work unchanged, and a call with one differs
only in where its result and scratch live. With ``data`` the result is written into the Data's array and
that array is returned (overwritten by the next call that writes it), and the kernel's scratch is
``data.work``: a caller that keeps its Data allocates nothing per call. The results equal those of the
calls without a Data bit for bit (the same compiled code runs; only the scratch comes from elsewhere).

Results (views of one block, laid out by ``layout``: ``kinodyn.layout.Layout``):

- ``tau`` (nv): ``rnea``; ``ddq`` (nv): ``aba``;
- ``nle`` (nv): ``nonlinear_effects``; ``g`` (nv): ``gravity_torques``; ``M`` (nv, nv): ``mass_matrix``;
  ``Ag`` (6, nv): ``centroidal_momentum_matrix``; ``com`` (3,): ``com``; ``Jcom`` (3, nv);
- ``oMf`` (nframes, 4, 4): ``frame_placement`` (row of the frame) and ``frame_placements``; ``J`` (6, nv):
  ``frame_jacobian``;
- ``evaluation``: the ``kinodyn.evaluation.Evaluation`` an ``Evaluator`` of ``frames`` writes (its mass
  matrix, nonlinear effects, gravity torques, CoM, CoM Jacobian and ``A_G`` are ``M``, ``nle``, ``g``,
  ``com``, ``Jcom`` and ``Ag``).

A Data belongs to the model that created it (the algorithms raise ``ValueError`` for another model's) and,
like Pinocchio's, to one caller at a time (it is not for sharing between threads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kinodyn.dynamics.aba import aba_work_size
from kinodyn.dynamics.centroidal import centroidal_work_size
from kinodyn.dynamics.crba import mass_matrix_work_size
from kinodyn.dynamics.rnea import rnea_work_size
from kinodyn.evaluation import (
    EVALUATION_FIELDS,
    Evaluation,
    evaluation_slots,
    evaluation_work_size,
    frame_ids,
)
from kinodyn.kinematics.center_of_mass import com_work_size
from kinodyn.kinematics.forward import placement_work_size
from kinodyn.layout import Layout

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kinodyn.model import Model

WORK_SIZES = (placement_work_size, com_work_size, rnea_work_size, mass_matrix_work_size, aba_work_size,
              centroidal_work_size, evaluation_work_size)
"""The compiled functions giving each kernel's scratch size ``(nb, nv) -> entries``; ``work`` holds the
largest."""


class Data:
    """Buffers and results of ``model`` at one configuration; see the module doc."""

    __slots__ = (
        "Ag",
        "J",
        "Jcom",
        "M",
        "block",
        "com",
        "ddq",
        "evaluation",
        "frames",
        "g",
        "layout",
        "model",
        "nle",
        "oMf",
        "oMf_rows",
        "tau",
        "work",
    )

    def __init__(self, model: Model, frames: Sequence[str | int] = ()) -> None:
        ids = frame_ids(model, frames)
        nv = model.nv
        self.model = model
        self.frames: tuple[str, ...] = tuple(model.frame_names[i] for i in ids)
        self.layout = Layout([*evaluation_slots(model.nq, nv, len(ids)),
                              ("tau", (nv,)), ("ddq", (nv,)), ("oMf", (model.nframes, 4, 4)), ("J", (6, nv))])
        self.block = np.zeros(self.layout.size)
        views = self.layout.views(self.block)
        self.work = np.zeros(max(size.py_func(model.nbodies, nv) for size in WORK_SIZES))
        self.M = views["mass_matrix"]
        self.nle = views["nonlinear_effects"]
        self.g = views["gravity_torques"]
        self.com = views["com"]
        self.Jcom = views["com_jacobian"]
        self.Ag = views["centroidal_matrix"]
        self.tau = views["tau"]
        self.ddq = views["ddq"]
        self.oMf = views["oMf"]
        self.oMf_rows = tuple(self.oMf[f] for f in range(model.nframes))
        self.J = views["J"]
        self.evaluation = Evaluation(frames=self.frames, total_mass=model.total_mass,
                                     **{name: views[name] for name in EVALUATION_FIELDS})

    def __repr__(self) -> str:
        return f"Data of {self.model!r}, frames {list(self.frames)}"

    def of(self, model: Model) -> Data:
        """This Data, after checking that ``model`` created it (``ValueError`` otherwise)."""
        if self.model is not model:
            raise ValueError(f"this Data belongs to {self.model!r}, not to {model!r}: pass "
                             "model.create_data()")
        return self

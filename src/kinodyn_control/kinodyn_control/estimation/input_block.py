"""A block of estimator input messages as arrays: what `kinodyn estimate` decodes from a bag and
``EstimatorPipeline.take_block`` consumes (docs/offline-estimation.md, "Speed")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kinodyn_control.estimation.messages import ImuSample, JointSample

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class InputBlock:
    """Input messages in arrival order as arrays (``EstimatorPipeline.take_block``). Message ``i`` is of
    stream ``streams[ranks[i]]``, stamped ``stamps[i]`` (header, ns), logged at ``times[i]`` (the bag's
    time, ns), row ``rows[i]`` of its stream's arrays:
    ``imu`` [w, a] (IMU frame) with ``imu_frames`` (header.frame_id); ``joints`` positions, velocities and
    efforts in the model's joint order (NaN where not given); ``contact_flags`` (1 in contact, 0 not; padded)
    of the feet ``contact_names[contact_layouts[row]]``."""

    streams: tuple[str, ...]
    ranks: np.ndarray
    stamps: np.ndarray
    times: np.ndarray
    rows: np.ndarray
    imu: np.ndarray
    imu_frames: np.ndarray
    joints: np.ndarray
    contact_layouts: np.ndarray
    contact_flags: np.ndarray
    contact_names: list[tuple[str, ...]]

    def payload(self, i: int) -> ImuSample | JointSample | dict[str, bool]:
        """Message ``i`` as the pipeline's ``on_*`` methods convert it (ImuSample, JointSample, or the
        contacts ``{foot: in contact}``)."""
        stream, k = self.streams[self.ranks[i]], int(self.rows[i])
        if stream == "imu":
            return ImuSample(self.imu_frames[k], self.imu[k, :3], self.imu[k, 3:])
        if stream == "joint_states":
            return JointSample(*self.joints[k])
        names = self.contact_names[self.contact_layouts[k]]
        return dict(zip(names, (self.contact_flags[k, :len(names)] != 0).tolist(), strict=True))

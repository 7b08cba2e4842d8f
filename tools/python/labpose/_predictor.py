"""Predictions on frames in memory: the Predictor, and reading a video's frames as analyze decodes
them."""
import os

import numpy

from labpose import _labpose, _output
from labpose._errors import UsageError


class Predictor:
    """A trained network, opened once: ``predict(frames)`` takes a uint8 RGB array (N, H, W, 3) and
    returns float32 (N, J, 3) rows of x, y, likelihood per bodypart, as analyze writes them. Any
    frame size; the network's plan is built again only when the size changes. DeepLabCut-Live's
    ``init_inference(frame)`` and ``get_pose(frame)`` take one (H, W, 3) frame and return (J, 3).

    config: a project's config.yaml, or an exported model folder (labpose export), which needs no
    project: then shuffle, trainingsetindex and snapshot do not apply.
    snapshot: None (config.yaml's snapshotindex), "best", or an index as snapshotindex.
    precision: "fp32", "bf16", "int8" (CPU) or "fp16" (GPU), or "auto"."""

    def __init__(self, config, shuffle=1, trainingsetindex=0, snapshot=None, device="auto",
                 batch_size=None, precision="fp32"):
        from labpose._workflow import _fraction, _snapshot_choice

        options = _labpose.PredictorOptions()
        if os.path.isfile(os.path.join(os.fspath(config), "pose_cfg.yaml")):
            if (shuffle, trainingsetindex, snapshot) != (1, 0, None):
                raise UsageError(f"{os.fspath(config)} is an exported model, which holds one "
                                 "snapshot", "leave out shuffle, trainingsetindex and snapshot")
        else:
            options.shuffle = int(shuffle)
            options.training_fraction = _fraction(config, trainingsetindex)
            options.snapshot_index, options.best_snapshot = _snapshot_choice(snapshot)
        options.device = str(device)
        options.batch_size = 0 if batch_size is None else int(batch_size)
        options.precision = str(precision)
        self._native = _output.call(_labpose.Predictor, os.fspath(config), options)

    @property
    def bodyparts(self):
        return list(self._native.bodyparts)

    @property
    def scorer(self):
        return self._native.scorer

    @property
    def net_type(self):
        return self._native.net_type

    @property
    def snapshot(self):
        return self._native.snapshot

    @property
    def device(self):
        return self._native.device

    @property
    def batch_size(self):
        return self._native.batch_size

    def predict(self, frames):
        frames = numpy.asarray(frames)
        if frames.dtype != numpy.uint8:
            raise UsageError(f"frames must be uint8 RGB pixels, got {frames.dtype}",
                             "convert with frames.astype(numpy.uint8) when they are 0-255 values")
        return self._native.predict(frames)

    def _one(self, frame):
        frame = numpy.asarray(frame)
        if frame.ndim != 3:
            raise UsageError(f"a frame must be an (height, width, 3) RGB array, got shape "
                             f"{frame.shape}", "for several frames use predict(frames)")
        return self.predict(frame[None])[0]

    def init_inference(self, frame):
        """Builds the plan for the frame's size and returns its pose (J, 3) (DeepLabCut-Live)."""
        return self._one(frame)

    def get_pose(self, frame):
        """The pose (J, 3) of one frame: x, y, likelihood per bodypart (DeepLabCut-Live)."""
        return self._one(frame)


def read_frames(video, start=0, count=None):
    """Frames [start, start + count) of a video (to its end when count is None) as a uint8 RGB
    array (N, H, W, 3), decoded as analyze decodes them."""
    return _labpose.read_frames(os.fspath(video), int(start), -1 if count is None else int(count))

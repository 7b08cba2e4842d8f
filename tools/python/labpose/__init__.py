"""labpose: markerless pose estimation for lab-animal video, with DeepLabCut's project files.

DeepLabCut's workflow functions under their names (``import labpose as deeplabcut`` runs most
notebooks unchanged), on labpose's native code in this process, and ``Predictor`` for frames in
memory. Errors raise ``labpose.Error`` with a ``hint``."""
from labpose._labpose import version as __version__
from labpose._errors import Error, Interrupted, UsageError
from labpose._predictor import Predictor, read_frames
from labpose._workflow import (LabelingSession, add_new_videos, analyze_videos, check_labels,
                               create_labeled_video, create_multianimaltraining_dataset,
                               convert_detections2tracklets, create_new_project,
                               create_training_dataset,
                               evaluate_network, export_model, extract_frames,
                               extract_outlier_frames,
                               filterpredictions, label_frames, merge_datasets, plot_trajectories,
                               refine_labels, stitch_tracklets, train_network)

__all__ = [
    "Error", "Interrupted", "UsageError", "Predictor", "read_frames", "LabelingSession",
    "label_frames", "refine_labels", "add_new_videos",
    "analyze_videos", "check_labels", "create_labeled_video", "create_multianimaltraining_dataset",
    "create_new_project",
    "create_training_dataset", "evaluate_network", "export_model", "extract_frames", "extract_outlier_frames",
    "filterpredictions", "merge_datasets", "plot_trajectories", "train_network",
    "convert_detections2tracklets", "stitch_tracklets",
]


def _document_commands():
    """Appends to each function's docstring the --help of the command it runs: the same text."""
    commands = {create_new_project: "create", add_new_videos: "add-videos",
                extract_frames: "extract-frames", label_frames: "label", check_labels: "check-labels",
                create_training_dataset: "create-dataset", train_network: "train",
                evaluate_network: "evaluate", analyze_videos: "analyze", filterpredictions: "filter",
                convert_detections2tracklets: "track", stitch_tracklets: "stitch",
                plot_trajectories: "plot-trajectories", create_labeled_video: "labeled-video",
                extract_outlier_frames: "extract-outliers", merge_datasets: "merge",
                export_model: "export"}
    from labpose import _labpose

    for function, command in commands.items():
        _, text = _labpose.run([command, "--help"], lambda _: None, False)
        function.__doc__ = (f"{function.__doc__}\n\nIt runs `labpose {command}`, whose options are "
                            f"these (the arguments above map to them):\n\n{text}")


_document_commands()

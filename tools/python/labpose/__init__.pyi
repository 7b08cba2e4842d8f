# Types of the labpose package (DeepLabCut's workflow functions, Predictor, read_frames).
import os
from typing import Optional, Sequence, Union

import numpy
import numpy.typing

Path = Union[str, os.PathLike]
Videos = Union[Path, Sequence[Path]]

__version__: str

class Error(Exception):
    message: str
    hint: str
    def __init__(self, message: str, hint: str = ...) -> None: ...

class UsageError(Error, ValueError): ...
class Interrupted(Error, KeyboardInterrupt): ...

class Predictor:
    def __init__(self, config: Path, shuffle: int = ..., trainingsetindex: int = ...,
                 snapshot: Union[None, int, str] = ..., device: str = ...,
                 batch_size: Optional[int] = ..., precision: str = ...) -> None: ...
    @property
    def bodyparts(self) -> list[str]: ...
    @property
    def scorer(self) -> str: ...
    @property
    def net_type(self) -> str: ...
    @property
    def snapshot(self) -> str: ...
    @property
    def device(self) -> str: ...
    @property
    def batch_size(self) -> int: ...
    def predict(self, frames: numpy.typing.ArrayLike) -> numpy.ndarray: ...
    def init_inference(self, frame: numpy.typing.ArrayLike) -> numpy.ndarray: ...
    def get_pose(self, frame: numpy.typing.ArrayLike) -> numpy.ndarray: ...

def read_frames(video: Path, start: int = ..., count: Optional[int] = ...) -> numpy.ndarray: ...

def create_new_project(project: str, experimenter: str, videos: Videos,
                       working_directory: Optional[Path] = ..., copy_videos: bool = ...,
                       videotype: str = ..., multianimal: bool = ...,
                       individuals: Optional[Sequence[str]] = ...) -> str: ...
def add_new_videos(config: Path, videos: Videos, copy_videos: bool = ..., coords: None = ...,
                   extract_frames: bool = ...) -> None: ...
def extract_frames(config: Path, mode: str = ..., algo: str = ..., crop: bool = ...,
                   userfeedback: Optional[bool] = ..., cluster_step: int = ...,
                   cluster_resizewidth: int = ..., cluster_color: bool = ..., opencv: bool = ...,
                   slider_width: int = ..., config3d: None = ..., extracted_cam: int = ...,
                   videos_list: Optional[Videos] = ..., seed: Optional[int] = ...) -> None: ...
def check_labels(config: Path, Labels: Sequence[str] = ..., scale: float = ..., dpi: int = ...,
                 draw_skeleton: bool = ..., visualizeindividuals: bool = ...) -> None: ...
def create_training_dataset(config: Path, num_shuffles: int = ...,
                            Shuffles: Optional[Sequence[int]] = ..., windows2linux: bool = ...,
                            userfeedback: bool = ...,
                            trainIndices: Optional[Sequence[Sequence[int]]] = ...,
                            testIndices: Optional[Sequence[Sequence[int]]] = ...,
                            net_type: Optional[str] = ..., augmenter_type: Optional[str] = ...,
                            posecfg_template: None = ..., weight_init: Optional[Path] = ...,
                            seed: Optional[int] = ...) -> None: ...
def create_multianimaltraining_dataset(config: Path, num_shuffles: int = ...,
                                       Shuffles: Optional[Sequence[int]] = ...,
                                       windows2linux: bool = ..., net_type: Optional[str] = ...,
                                       numdigits: int = ..., crop_size: Sequence[int] = ...,
                                       crop_sampling: str = ..., paf_graph: None = ...,
                                       trainIndices: Optional[Sequence[Sequence[int]]] = ...,
                                       testIndices: Optional[Sequence[Sequence[int]]] = ...,
                                       n_edges_threshold: int = ..., paf_graph_degree: int = ...,
                                       userfeedback: bool = ...,
                                       weight_init: Optional[Path] = ...,
                                       seed: Optional[int] = ...) -> None: ...
def train_network(config: Path, shuffle: int = ..., trainingsetindex: int = ...,
                  max_snapshots_to_keep: Optional[int] = ..., displayiters: Optional[int] = ...,
                  saveiters: Optional[int] = ..., maxiters: Optional[int] = ...,
                  allow_growth: bool = ..., gputouse: Optional[int] = ..., autotune: bool = ...,
                  keepdeconvweights: bool = ..., modelprefix: str = ...,
                  batch_size: Optional[int] = ..., device: Optional[str] = ..., resume: bool = ...,
                  max_minutes: Optional[float] = ..., precision: Optional[str] = ...,
                  seed: Optional[int] = ...) -> None: ...
def evaluate_network(config: Path, Shuffles: Union[int, Sequence[int]] = ...,
                     trainingsetindex: Union[int, str] = ..., plotting: bool = ...,
                     show_errors: bool = ..., comparisonbodyparts: str = ...,
                     gputouse: Optional[int] = ..., rescale: bool = ..., modelprefix: str = ...,
                     snapshot: Union[None, int, str] = ..., device: Optional[str] = ...,
                     precision: Optional[str] = ...) -> object: ...
def analyze_videos(config: Path, videos: Videos, videotype: str = ..., shuffle: int = ...,
                   trainingsetindex: int = ..., gputouse: Optional[int] = ...,
                   save_as_csv: bool = ..., in_random_order: bool = ...,
                   destfolder: Optional[Path] = ..., batchsize: Optional[int] = ...,
                   cropping: Optional[Sequence[int]] = ..., TFGPUinference: bool = ...,
                   dynamic: tuple = ..., modelprefix: str = ..., robust_nframes: bool = ...,
                   allow_growth: bool = ..., use_shelve: bool = ..., auto_track: bool = ...,
                   n_tracks: None = ..., calibrate: bool = ..., identity_only: bool = ...,
                   use_openvino: None = ..., snapshot: Union[None, int, str] = ...,
                   device: Optional[str] = ..., precision: Optional[str] = ...) -> str: ...
def filterpredictions(config: Path, video: Videos, videotype: str = ..., shuffle: int = ...,
                      trainingsetindex: int = ..., filtertype: str = ..., windowlength: int = ...,
                      p_bound: float = ..., ARdegree: int = ..., MAdegree: int = ...,
                      alpha: float = ..., save_as_csv: bool = ...,
                      destfolder: Optional[Path] = ..., modelprefix: str = ...,
                      track_method: str = ...) -> None: ...
def plot_trajectories(config: Path, videos: Videos, videotype: str = ..., shuffle: int = ...,
                      trainingsetindex: int = ..., filtered: bool = ...,
                      displayedbodyparts: str = ..., displayedindividuals: str = ...,
                      showfigures: bool = ..., destfolder: Optional[Path] = ...,
                      modelprefix: str = ..., imagetype: str = ..., resolution: int = ...,
                      linewidth: float = ..., track_method: str = ...,
                      pcutoff: Optional[float] = ...) -> None: ...
def create_labeled_video(config: Path, videos: Videos, videotype: str = ..., shuffle: int = ...,
                         trainingsetindex: int = ..., filtered: bool = ..., fastmode: bool = ...,
                         save_frames: bool = ..., keypoints_only: bool = ...,
                         Frames2plot: None = ..., displayedbodyparts: str = ...,
                         displayedindividuals: str = ..., codec: str = ...,
                         outputframerate: None = ..., destfolder: Optional[Path] = ...,
                         draw_skeleton: bool = ..., trailpoints: int = ...,
                         displaycropped: bool = ..., color_by: str = ..., modelprefix: str = ...,
                         track_method: str = ..., pcutoff: Optional[float] = ...,
                         overwrite: bool = ...) -> None: ...
def extract_outlier_frames(config: Path, videos: Videos, videotype: str = ..., shuffle: int = ...,
                           trainingsetindex: int = ..., outlieralgorithm: str = ...,
                           comparisonbodyparts: Union[str, Sequence[str]] = ...,
                           epsilon: float = ..., p_bound: float = ..., ARdegree: int = ...,
                           MAdegree: int = ..., alpha: float = ...,
                           extractionalgorithm: str = ..., automatic: bool = ...,
                           cluster_resizewidth: int = ..., cluster_color: bool = ...,
                           opencv: bool = ..., savelabeled: bool = ..., copy_videos: bool = ...,
                           destfolder: Optional[Path] = ..., modelprefix: str = ...,
                           track_method: str = ..., seed: Optional[int] = ...) -> None: ...
def merge_datasets(config: Path, forceiterate: Optional[int] = ...) -> None: ...
def export_model(cfg_path: Path, iteration: Optional[int] = ..., shuffle: int = ...,
                 trainingsetindex: int = ..., snapshotindex: Union[None, int, str] = ...,
                 TFGPUinference: bool = ..., overwrite: bool = ..., make_tar: bool = ...,
                 wipepaths: bool = ..., modelprefix: str = ..., destfolder: Optional[Path] = ...,
                 onnx: bool = ..., with_decoding: bool = ...) -> str: ...

class LabelingSession:
    @property
    def url(self) -> str: ...
    @property
    def serving(self) -> bool: ...
    def stop(self) -> None: ...

def label_frames(config: Path, port: Optional[int] = ..., host: str = ...,
                 refine: bool = ...) -> LabelingSession: ...
def refine_labels(config: Path, port: Optional[int] = ..., host: str = ...) -> LabelingSession: ...

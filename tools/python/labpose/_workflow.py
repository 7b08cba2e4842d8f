"""DeepLabCut's workflow functions, with their names and their argument names where they mean the
same. Each builds the arguments of the labpose command that does the work and runs that command in
this process (the command line's own parser, checks and messages). An argument labpose cannot honour
raises labpose.UsageError naming it; arguments that only tuned TensorFlow or a GUI are accepted and
have no effect."""
import atexit
import os
import tempfile
import warnings

from labpose import _labpose, _output
from labpose._errors import UsageError


def _path(value):
    return os.fspath(value)


def _refuse(function, **arguments):
    """UsageError for the first argument whose value is not DeepLabCut's default: (value, default,
    why) each."""
    for name, (value, default, why) in arguments.items():
        if value != default:
            raise UsageError(f"{function}: {name}={value!r} is not supported by labpose", why)


def _ignored(function, name, why):
    warnings.warn(f"{function}: {name} has no effect in labpose: {why}", stacklevel=3)


def _labpose_output(name):
    """A labeled video or a full-frame copy labpose (or DeepLabCut) made, not a recording: skipped
    in folders as the command line skips it."""
    stem = os.path.splitext(name)[0]
    return stem.endswith(("_labeled", "_full")) or stem.startswith(".")


def _videos(videos, videotype=""):
    """Video paths; a folder with `videotype` given becomes its videos of that type."""
    if isinstance(videos, (str, os.PathLike)):
        videos = [videos]
    paths = []
    for video in videos:
        video = _path(video)
        if videotype and os.path.isdir(video):
            suffix = videotype if videotype.startswith(".") else "." + videotype
            found = sorted(os.path.join(video, name) for name in os.listdir(video)
                           if name.lower().endswith(suffix.lower()) and not _labpose_output(name))
            if not found:
                raise UsageError(f"{video} has no {suffix} videos",
                                 "check videotype, or pass the videos themselves")
            paths.extend(found)
        else:
            paths.append(video)
    if not paths:
        raise UsageError("no videos given", "pass a video, a list of videos or a folder")
    return paths


def _project(config):
    return _output.call(_labpose.project_info, _path(config))


def _fraction(config, trainingsetindex):
    """The TrainingFraction that DeepLabCut's trainingsetindex names."""
    fractions = _project(config)["training_fractions"]
    if not isinstance(trainingsetindex, int) or not 0 <= trainingsetindex < len(fractions):
        raise UsageError(f"trainingsetindex={trainingsetindex!r} is not an index of config.yaml's "
                         f"TrainingFraction {fractions}",
                         f"use 0 to {len(fractions) - 1}" + ("" if len(fractions) > 1 else " (0)"))
    return fractions[trainingsetindex]


def _device(gputouse, device):
    """labpose's device: `device` when given, else DeepLabCut's gputouse (a GPU number), else auto (a
    GPU when there is one, else the CPU)."""
    if device is not None:
        return str(device)
    if gputouse is not None:
        return f"cuda:{int(gputouse)}"
    return "auto"


def _model_arguments(shuffle, fraction, snapshot=None):
    """--shuffle, --training-fraction (`fraction`, from _fraction) and --snapshot when given."""
    arguments = ["--shuffle", int(shuffle), "--training-fraction", fraction]
    if snapshot is not None:
        arguments += ["--snapshot", snapshot]
    return arguments


def _printed_lines(printed):
    return [line for line in printed.splitlines() if line.strip()]


def create_new_project(project, experimenter, videos, working_directory=None, copy_videos=False,
                       videotype="", multianimal=False, individuals=None):
    """Creates <project>-<experimenter>-<date>/ in DeepLabCut's layout with the videos (linked, or
    copied with copy_videos=True); multianimal=True makes a multi-animal project (individuals: their
    names). Returns the path of its config.yaml."""
    if individuals is not None and not multianimal:
        raise UsageError("create_new_project: individuals are named in a multi-animal project only",
                         "pass multianimal=True with individuals")
    arguments = ["create", project, experimenter, *_videos(videos, videotype)]
    if multianimal:
        arguments.append("--multi-animal")
        if individuals is not None:
            arguments += ["--individuals", ",".join(str(name) for name in individuals)]
    if working_directory is not None:
        arguments += ["--dir", _path(working_directory)]
    if copy_videos:
        arguments.append("--copy-videos")
    return _printed_lines(_output.run(arguments))[-1]


def add_new_videos(config, videos, copy_videos=False, coords=None, extract_frames=False):
    """Adds videos to the project (video_sets and labeled-data/); with extract_frames=True also
    extracts frames of them."""
    _refuse("add_new_videos",
            coords=(coords, None, "set a video's crop in config.yaml's video_sets after adding it"))
    paths = _videos(videos)
    arguments = ["add-videos", _path(config), *paths]
    if copy_videos:
        arguments.append("--copy-videos")
    _output.run(arguments)
    if extract_frames:
        # DeepLabCut's argument hides the function of the same name.
        globals()["extract_frames"](config, videos_list=paths)


def extract_frames(config, mode="automatic", algo="kmeans", crop=False, userfeedback=None,
                   cluster_step=1, cluster_resizewidth=30, cluster_color=False, opencv=True,
                   slider_width=25, config3d=None, extracted_cam=0, videos_list=None, seed=None):
    """Extracts numframes2pick frames of each video of the project into labeled-data/<video>/
    (kmeans: one per cluster of similar-looking frames; uniform: at random)."""
    _refuse("extract_frames",
            mode=(mode, "automatic", "frames are picked automatically; to label a given frame, "
                                     "extract with algo='uniform' or use the labeling page"),
            cluster_step=(cluster_step, 1, "kmeans clusters every frame"),
            config3d=(config3d, None, "3D projects are not supported"),
            extracted_cam=(extracted_cam, 0, "3D projects are not supported"))
    if crop not in (True, False):
        raise UsageError(f"extract_frames: crop={crop!r} is not supported by labpose",
                         "crop=True crops to each video's crop in config.yaml's video_sets; set it "
                         "there")
    if userfeedback:
        _ignored("extract_frames", "userfeedback", "labpose never asks; it extracts from every "
                                                    "video (or from videos_list)")
    arguments = ["extract-frames", _path(config), "--algo", algo,
                 "--cluster-resize-width", int(cluster_resizewidth)]
    if crop is True:
        arguments.append("--crop")
    if cluster_color:
        arguments.append("--cluster-color")
    if videos_list:
        arguments += ["--videos", *_videos(videos_list)]
    if seed is not None:
        arguments += ["--seed", int(seed)]
    _output.run(arguments)


def check_labels(config, Labels=("+", ".", "x"), scale=1, dpi=100, draw_skeleton=True,
                 visualizeindividuals=True):
    """Draws the labels on every labeled frame into labeled-data/<video>_labeled/."""
    _refuse("check_labels",
            Labels=(tuple(Labels), ("+", ".", "x"), "labpose draws its own markers"),
            scale=(scale, 1, "frames are drawn at their size"),
            dpi=(dpi, 100, "frames are drawn at their size"))
    _output.run(["check-labels", _path(config)])


def create_training_dataset(config, num_shuffles=1, Shuffles=None, windows2linux=False,
                            userfeedback=False, trainIndices=None, testIndices=None, net_type=None,
                            augmenter_type=None, posecfg_template=None, weight_init=None,
                            seed=None, _paf_graph=None):
    """Makes the training set and, per shuffle, the split and train/pose_cfg.yaml (pretrained
    weights from labpose's cache, fetched once when they are not there; weight_init: a
    .safetensors backbone, or "none" to train from scratch). Shuffles: these shuffle numbers; else
    shuffles 1 to num_shuffles. A split saved for a shuffle is kept. trainIndices/testIndices: one
    list of row indices per shuffle."""
    _refuse("create_training_dataset",
            posecfg_template=(posecfg_template, None, "edit train/pose_cfg.yaml after it is made"))
    if augmenter_type is not None:
        _ignored("create_training_dataset", "augmenter_type",
                 "labpose has one augmentation (DeepLabCut's imgaug defaults); see pose_cfg.yaml")
    base = ["create-dataset", _path(config)]
    if net_type is not None:
        base += ["--net", net_type]
    if weight_init is not None:
        base += ["--weights", _path(weight_init)]
    if seed is not None:
        base += ["--seed", int(seed)]
    if _paf_graph is not None:
        base += ["--paf-graph", _paf_graph]
    if (trainIndices is None) != (testIndices is None):
        raise UsageError("create_training_dataset: trainIndices and testIndices go together",
                         "give both, one list per shuffle, or neither")
    # As DeepLabCut: shuffles 1..num_shuffles unless Shuffles names them (made again, each keeping
    # the split saved for it).
    shuffles = list(Shuffles) if Shuffles is not None else list(range(1, int(num_shuffles) + 1))
    if trainIndices is not None and not len(trainIndices) == len(testIndices) == len(shuffles):
        raise UsageError(f"create_training_dataset: {len(shuffles)} shuffles, {len(trainIndices)} "
                         f"trainIndices and {len(testIndices)} testIndices lists",
                         "give one list of train and one of test indices per shuffle")
    with tempfile.TemporaryDirectory(prefix="labpose-indices-") as folder:
        for k, shuffle in enumerate(shuffles):
            arguments = base + ["--shuffle", int(shuffle)]
            if trainIndices is not None:
                files = []
                for name, rows in (("train", trainIndices[k]), ("test", testIndices[k])):
                    path = os.path.join(folder, f"{name}-{shuffle}.txt")
                    with open(path, "w") as f:
                        f.write("".join(f"{int(row)}\n" for row in rows))
                    files.append(path)
                arguments += ["--train-indices", files[0], "--test-indices", files[1], "--force"]
            _output.run(arguments)


def create_multianimaltraining_dataset(config, num_shuffles=1, Shuffles=None, windows2linux=False,
                                       net_type=None, numdigits=2, crop_size=(400, 400),
                                       crop_sampling="hybrid", paf_graph=None, trainIndices=None,
                                       testIndices=None, n_edges_threshold=105,
                                       paf_graph_degree=6, userfeedback=False, weight_init=None,
                                       seed=None):
    """A multi-animal project's training set, DeepLabCut's multi-animal files included (the same
    `labpose create-dataset` as create_training_dataset). net_type is needed: DeepLabCut's default
    for these projects, dlcrnet_ms5, is not one labpose trains. The PAF graph is every pair of
    multi-animal bodyparts (pruned at random to degree 6 from 105 edges), "config" for
    config.yaml's skeleton, or a list of [i, j] pairs of multianimalbodyparts indices; evaluate
    then picks the edges assembly uses (paf_best). Training crops are taken around the labeled
    animals (pose_cfg.yaml's crop_size, 256 by default)."""
    _refuse("create_multianimaltraining_dataset",
            numdigits=(numdigits, 2, "coordinates are rounded to 2 decimals as DeepLabCut does"))
    if paf_graph is None:
        graph = None
    elif isinstance(paf_graph, str):
        graph = "skeleton" if paf_graph == "config" else paf_graph
    else:
        graph = ",".join(f"{int(a)}-{int(b)}" for a, b in paf_graph)
    for name, value, default in (("crop_size", tuple(crop_size), (400, 400)),
                                 ("crop_sampling", crop_sampling, "hybrid"),
                                 ("n_edges_threshold", n_edges_threshold, 105),
                                 ("paf_graph_degree", paf_graph_degree, 6)):
        if value != default:
            _ignored("create_multianimaltraining_dataset", name,
                     "set the crop in train/pose_cfg.yaml (crop_size); labpose prunes graphs of "
                     "105 edges or more to degree 6, as DeepLabCut's defaults do")
    create_training_dataset(config, num_shuffles=num_shuffles, Shuffles=Shuffles,
                            windows2linux=windows2linux, userfeedback=userfeedback,
                            trainIndices=trainIndices, testIndices=testIndices, net_type=net_type,
                            weight_init=weight_init, seed=seed, _paf_graph=graph)


def train_network(config, shuffle=1, trainingsetindex=0, max_snapshots_to_keep=None,
                  displayiters=None, saveiters=None, maxiters=None, allow_growth=True,
                  gputouse=None, autotune=False, keepdeconvweights=True, modelprefix="",
                  batch_size=None, device=None, resume=False, max_minutes=None, precision=None,
                  seed=None):
    """Trains the shuffle with its train/pose_cfg.yaml (the arguments override it for this run).
    max_minutes: train this long, the learning rate decaying over the time. An interrupt (the
    kernel's stop button) saves a snapshot and raises labpose.Interrupted (a KeyboardInterrupt);
    resume=True continues exactly where it stopped."""
    _refuse("train_network",
            keepdeconvweights=(keepdeconvweights, True, "the head always starts as create-dataset "
                                                        "set it up"),
            modelprefix=(modelprefix, "", "labpose keeps one model folder per shuffle"))
    arguments = ["train", _path(config), "--device", _device(gputouse, device),
                 *_model_arguments(shuffle, _fraction(config, trainingsetindex))]
    for flag, value in (("--keep-snapshots", max_snapshots_to_keep),
                        ("--display-iters", displayiters), ("--save-iters", saveiters),
                        ("--max-iters", maxiters), ("--batch-size", batch_size),
                        ("--max-minutes", max_minutes), ("--precision", precision),
                        ("--seed", seed)):
        if value is not None:
            arguments += [flag, value]
    if resume:
        arguments.append("--resume")
    _output.run(arguments)


def evaluate_network(config, Shuffles=(1,), trainingsetindex=0, plotting=False, show_errors=True,
                     comparisonbodyparts="all", gputouse=None, rescale=False, modelprefix="",
                     snapshot=None, device=None, precision=None):
    """Evaluates the shuffles' snapshots on their training and test images (trainingsetindex="all":
    every TrainingFraction); plotting=True also draws the frames. Returns the evaluation summary
    (CombinedEvaluation-results.csv) as a pandas DataFrame when pandas is installed, else None."""
    _refuse("evaluate_network",
            comparisonbodyparts=(comparisonbodyparts, "all", "every bodypart is compared; the "
                                                             "per-bodypart table is printed too"),
            rescale=(rescale, False, "images are evaluated at their size"),
            modelprefix=(modelprefix, "", "labpose keeps one model folder per shuffle"))
    if isinstance(Shuffles, int):
        Shuffles = [Shuffles]
    fraction = None if trainingsetindex == "all" else _fraction(config, trainingsetindex)
    for shuffle in Shuffles:
        arguments = ["evaluate", _path(config), "--shuffle", int(shuffle),
                     "--device", _device(gputouse, device)]
        if fraction is not None:
            arguments += ["--training-fraction", fraction]
        if snapshot is not None:
            arguments += ["--snapshot", snapshot]
        if precision is not None:
            arguments += ["--precision", precision]
        if plotting:
            arguments.append("--plot")
        _output.run(arguments if show_errors else ["--quiet", *arguments])
    try:
        import pandas
    except ImportError:
        return None
    return pandas.read_csv(_project(config)["combined_evaluation"], index_col=0)


def analyze_videos(config, videos, videotype="", shuffle=1, trainingsetindex=0, gputouse=None,
                   save_as_csv=False, in_random_order=True, destfolder=None, batchsize=None,
                   cropping=None, TFGPUinference=True, dynamic=(False, 0.5, 10), modelprefix="",
                   robust_nframes=False, allow_growth=False, use_shelve=False, auto_track=True,
                   n_tracks=None, calibrate=False, identity_only=False, use_openvino=None,
                   snapshot=None, device=None, precision=None, temporal_prior=True):
    """Tracks the bodyparts in the videos (or the folders' videos of `videotype`), writing
    DeepLabCut's <video>DLC_....h5 (and .csv with save_as_csv=True) beside each video or in
    destfolder. Returns the scorer name (DeepLabCut's DLCscorer). In a multi-animal project,
    temporal_prior=False assembles each frame alone, as DeepLabCut does."""
    _refuse("analyze_videos",
            dynamic=(tuple(dynamic)[0], False, "labpose analyzes whole frames, or a fixed crop "
                                               "(cropping=[x1, x2, y1, y2])"),
            modelprefix=(modelprefix, "", "labpose keeps one model folder per shuffle"),
            n_tracks=(n_tracks, None, "labpose stitches one track per individual of config.yaml; "
                                      "use stitch_tracklets(n_tracks=...) for other numbers"),
            calibrate=(calibrate, False, "labpose does not calibrate assembly"),
            identity_only=(identity_only, False, "run `labpose analyze --tracker identity`, which "
                                                 "links by the identity head's votes (_id files)"),
            use_openvino=(bool(use_openvino), False, "use precision='bf16' or 'int8' for "
                                                     "labpose's own faster CPU arithmetic"))
    fraction = _fraction(config, trainingsetindex)
    arguments = ["analyze", _path(config), *_videos(videos, videotype),
                 "--device", _device(gputouse, device),
                 *_model_arguments(shuffle, fraction, snapshot)]
    if save_as_csv:
        arguments.append("--csv")
    if destfolder is not None:
        arguments += ["--dest", _path(destfolder)]
    if batchsize is not None:
        arguments += ["--batch-size", int(batchsize)]
    if cropping is not None:
        arguments += ["--crop", ",".join(str(int(value)) for value in cropping)]
    if precision is not None:
        arguments += ["--precision", precision]
    if not auto_track:
        arguments.append("--no-track")
    if not temporal_prior:
        arguments.append("--no-temporal-prior")
    _output.run(arguments)
    index, best = _snapshot_choice(snapshot)
    return _output.call(_labpose.scorer, _path(config), int(shuffle), fraction, index, best)


def _tracker(function, track_method):
    """--tracker for DeepLabCut's track_method ("" is labpose's default, the ellipse tracker)."""
    if track_method not in ("", "ellipse", "box"):
        raise UsageError(f"{function}: track_method={track_method!r} is not supported by labpose",
                         "use track_method='ellipse' (the default) or 'box'")
    return ["--tracker", track_method] if track_method else []


def convert_detections2tracklets(config, videos, videotype="", shuffle=1, trainingsetindex=0,
                                 overwrite=False, destfolder=None, ignore_bodyparts=None,
                                 inferencecfg=None, modelprefix="", greedy=False, calibrate=False,
                                 window_size=0, identity_only=False, track_method="",
                                 snapshot=None):
    """Links the animals that analyze_videos(..., auto_track=False) assembled in each frame into
    tracklets: reads each video's <video>DLC_..._assemblies.pickle and writes its _el.pickle (_bx
    with track_method="box"), with the tracker settings of the shuffle's inference_cfg.yaml."""
    _refuse("convert_detections2tracklets",
            ignore_bodyparts=(ignore_bodyparts, None, "labpose links every multi-animal bodypart"),
            inferencecfg=(inferencecfg, None, "edit the shuffle's test/inference_cfg.yaml, which "
                                              "labpose reads"),
            modelprefix=(modelprefix, "", "labpose keeps one model folder per shuffle"),
            calibrate=(calibrate, False, "labpose does not calibrate assembly"),
            identity_only=(identity_only, False, "run `labpose track --tracker identity`, which "
                                                 "links by the identity head's votes (_id files)"))
    for name, value, default in (("greedy", greedy, False), ("window_size", window_size, 0)):
        if value != default:
            _ignored("convert_detections2tracklets", name,
                     "the assemblies are read as analyze_videos wrote them")
    arguments = ["track", _path(config), *_videos(videos, videotype),
                 *_model_arguments(shuffle, _fraction(config, trainingsetindex), snapshot),
                 *_tracker("convert_detections2tracklets", track_method)]
    if overwrite:
        arguments.append("--overwrite")
    if destfolder is not None:
        arguments += ["--dest", _path(destfolder)]
    _output.run(arguments)


def stitch_tracklets(config_path, videos, videotype="", shuffle=1, trainingsetindex=0,
                     n_tracks=None, min_length=10, split_tracklets=True, prestitch_residuals=True,
                     max_gap=None, weight_func=None, destfolder=None, modelprefix="",
                     track_method="", output_name="", transformer_checkpoint="",
                     save_as_csv=False, snapshot=None):
    """Joins each video's tracklets (_el.pickle) into one track per individual by a global
    min-cost flow, and writes the tracks <video>DLC_..._el.h5 (and .csv with save_as_csv=True).
    Tracks are made again on every call, as DeepLabCut does."""
    _refuse("stitch_tracklets",
            split_tracklets=(split_tracklets, True, "labpose always cuts tracklets at their holes"),
            prestitch_residuals=(prestitch_residuals, True,
                                 "labpose always chains the short tracklets first"),
            weight_func=(weight_func, None, "labpose weighs links by the gap between tracklets"),
            modelprefix=(modelprefix, "", "labpose keeps one model folder per shuffle"),
            output_name=(output_name, "", "labpose names the tracks after the tracklets"),
            transformer_checkpoint=(transformer_checkpoint, "",
                                    "labpose has no transformer re-identification"))
    arguments = ["stitch", _path(config_path), *_videos(videos, videotype),
                 *_model_arguments(shuffle, _fraction(config_path, trainingsetindex), snapshot),
                 *_tracker("stitch_tracklets", track_method),
                 "--min-length", int(min_length), "--overwrite"]
    if n_tracks is not None:
        arguments += ["--n-tracks", int(n_tracks)]
    if max_gap is not None:
        arguments += ["--max-gap", int(max_gap)]
    if save_as_csv:
        arguments.append("--csv")
    if destfolder is not None:
        arguments += ["--dest", _path(destfolder)]
    _output.run(arguments)


def _snapshot_choice(snapshot):
    if snapshot is None:
        return None, False
    if snapshot == "best":
        return None, True
    return int(snapshot), False


def filterpredictions(config, video, videotype="", shuffle=1, trainingsetindex=0,
                      filtertype="median", windowlength=5, p_bound=0.001, ARdegree=3, MAdegree=1,
                      alpha=0.01, save_as_csv=True, destfolder=None, modelprefix="",
                      track_method=""):
    """Filters analyzed tracks (median, savgol, spline or arima) into <...>_filtered.h5."""
    _refuse("filterpredictions",
            alpha=(alpha, 0.01, "arima's significance level is fixed at 0.01"),
            modelprefix=(modelprefix, "", "labpose keeps one model folder per shuffle"),
            track_method=(track_method, "", "labpose tracks one animal per video"))
    arguments = ["filter", _path(config), *_videos(video, videotype),
                 *_model_arguments(shuffle, _fraction(config, trainingsetindex)),
                 "--type", filtertype, "--window", int(windowlength), "--p-bound", p_bound,
                 "--ar-degree", int(ARdegree), "--ma-degree", int(MAdegree)]
    if not save_as_csv:
        arguments.append("--no-csv")
    if destfolder is not None:
        arguments += ["--dest", _path(destfolder)]
    _output.run(arguments)


def plot_trajectories(config, videos, videotype="", shuffle=1, trainingsetindex=0, filtered=False,
                      displayedbodyparts="all", displayedindividuals="all", showfigures=False,
                      destfolder=None, modelprefix="", imagetype=".png", resolution=100,
                      linewidth=1.0, track_method="", pcutoff=None):
    """Plots the tracks of analyzed videos into plot-poses/<video>/ (PNG figures)."""
    _refuse("plot_trajectories",
            displayedbodyparts=(displayedbodyparts, "all", "every bodypart is plotted"),
            modelprefix=(modelprefix, "", "labpose keeps one model folder per shuffle"),
            imagetype=(imagetype, ".png", "the figures are PNG"),
            resolution=(resolution, 100, "the figures are drawn at 100 dpi"),
            linewidth=(linewidth, 1.0, "the figures are drawn with lines of 1"))
    if showfigures:
        _ignored("plot_trajectories", "showfigures", "labpose opens no windows; open the PNG files")
    arguments = ["plot-trajectories", _path(config), *_videos(videos, videotype),
                 *_model_arguments(shuffle, _fraction(config, trainingsetindex))]
    if filtered:
        arguments.append("--filtered")
    if pcutoff is not None:
        arguments += ["--pcutoff", pcutoff]
    if destfolder is not None:
        arguments += ["--dest", _path(destfolder)]
    _output.run(arguments)


def create_labeled_video(config, videos, videotype="", shuffle=1, trainingsetindex=0,
                         filtered=False, fastmode=True, save_frames=False, keypoints_only=False,
                         Frames2plot=None, displayedbodyparts="all", displayedindividuals="all",
                         codec="mp4v", outputframerate=None, destfolder=None, draw_skeleton=False,
                         trailpoints=0, displaycropped=False, color_by="bodypart", modelprefix="",
                         track_method="", pcutoff=None, overwrite=False):
    """Draws the tracks on the videos into <video>DLC_..._labeled.mp4."""
    _refuse("create_labeled_video",
            save_frames=(save_frames, False, "labpose writes the labeled video only"),
            keypoints_only=(keypoints_only, False, "the keypoints are drawn on the frames"),
            Frames2plot=(Frames2plot, None, "every frame is drawn"),
            displayedbodyparts=(displayedbodyparts, "all", "every bodypart is drawn"),
            outputframerate=(outputframerate, None, "the video keeps its frame rate"),
            displaycropped=(displaycropped, False, "the whole frame is drawn"),
            color_by=(color_by, "bodypart", "points are coloured by bodypart"),
            modelprefix=(modelprefix, "", "labpose keeps one model folder per shuffle"),
            track_method=(track_method, "", "labpose tracks one animal per video"))
    arguments = ["labeled-video", _path(config), *_videos(videos, videotype),
                 *_model_arguments(shuffle, _fraction(config, trainingsetindex))]
    if filtered:
        arguments.append("--filtered")
    if draw_skeleton:
        arguments.append("--skeleton")
    if trailpoints:
        arguments += ["--trail", int(trailpoints)]
    if pcutoff is not None:
        arguments += ["--pcutoff", pcutoff]
    if destfolder is not None:
        arguments += ["--dest", _path(destfolder)]
    if overwrite:
        arguments.append("--overwrite")
    _output.run(arguments)


def extract_outlier_frames(config, videos, videotype="", shuffle=1, trainingsetindex=0,
                           outlieralgorithm="jump", comparisonbodyparts="all", epsilon=20,
                           p_bound=0.01, ARdegree=3, MAdegree=1, alpha=0.01,
                           extractionalgorithm="kmeans", automatic=False, cluster_resizewidth=30,
                           cluster_color=False, opencv=True, savelabeled=False,
                           copy_videos=False, destfolder=None, modelprefix="", track_method="",
                           seed=None):
    """Extracts frames where the tracks look wrong (jump, uncertain or fitting) for relabeling."""
    _refuse("extract_outlier_frames",
            savelabeled=(savelabeled, False, "check the frames on the labeling page"),
            modelprefix=(modelprefix, "", "labpose keeps one model folder per shuffle"),
            track_method=(track_method, "", "labpose tracks one animal per video"))
    if outlieralgorithm == "manual":
        raise UsageError("extract_outlier_frames: outlieralgorithm='manual' is not supported by "
                         "labpose", "use jump, uncertain or fitting")
    arguments = ["extract-outliers", _path(config), *_videos(videos, videotype),
                 *_model_arguments(shuffle, _fraction(config, trainingsetindex)),
                 "--algo", outlieralgorithm, "--epsilon", epsilon, "--p-bound", p_bound,
                 "--ar-degree", int(ARdegree), "--ma-degree", int(MAdegree), "--alpha", alpha,
                 "--extraction", extractionalgorithm,
                 "--cluster-resize-width", int(cluster_resizewidth)]
    if comparisonbodyparts != "all":
        names = [comparisonbodyparts] if isinstance(comparisonbodyparts, str) else comparisonbodyparts
        arguments += ["--bodyparts", *names]
    if cluster_color:
        arguments.append("--cluster-color")
    if destfolder is not None:
        arguments += ["--dest", _path(destfolder)]
    if seed is not None:
        arguments += ["--seed", int(seed)]
    _output.run(arguments)


def merge_datasets(config, forceiterate=None):
    """Merges the refined labels into the next iteration (or iteration forceiterate)."""
    arguments = ["merge", _path(config)]
    if forceiterate is not None:
        arguments += ["--iteration", int(forceiterate)]
    _output.run(arguments)


def export_model(cfg_path, iteration=None, shuffle=1, trainingsetindex=0, snapshotindex=None,
                 TFGPUinference=True, overwrite=False, make_tar=True, wipepaths=False,
                 modelprefix="", destfolder=None, onnx=False, with_decoding=False):
    """Exports the shuffle's snapshot as a folder that runs without the project
    (exported-models/DLC_<Task>_<net>_iteration-<K>_shuffle-<S>/: model.safetensors, pose_cfg.yaml,
    its int8 calibration, a README and, with onnx=True, model.onnx). Returns the folder's path;
    labpose.Predictor and labpose analyze --model take it."""
    _refuse("export_model",
            iteration=(iteration, None, "labpose exports the project's current iteration"),
            modelprefix=(modelprefix, "", "labpose keeps one model folder per shuffle"))
    if make_tar:
        _ignored("export_model", "make_tar", "labpose writes the folder; tar it if you need one "
                                             "file")
    del TFGPUinference, wipepaths  # no TensorFlow graph; the folder holds no paths of this machine
    arguments = ["export", _path(cfg_path),
                 *_model_arguments(shuffle, _fraction(cfg_path, trainingsetindex), snapshotindex)]
    if overwrite:
        arguments.append("--overwrite")
    if destfolder is not None:
        arguments += ["--dest", _path(destfolder)]
    if onnx:
        arguments.append("--onnx")
    if with_decoding:
        arguments.append("--with-decoding")
    return _output.run(arguments).strip().splitlines()[-1]


class LabelingSession:
    """The labeling page of a project, served in the background: open ``url`` in a browser (from
    another computer through ``ssh -L``, as the command line says). ``stop()`` ends it; it also ends
    with the Python process. Every change is saved at once, as with ``labpose label``."""

    def __init__(self, server):
        self._server = server

    @property
    def url(self):
        return self._server.url

    @property
    def serving(self):
        return self._server.serving

    def stop(self):
        self._server.stop()

    def __repr__(self):
        state = self.url if self.serving else "stopped"
        return f"<labpose labeling page: {state}>"

    def _repr_html_(self):
        if not self.serving:
            return "labpose labeling page: stopped"
        return (f'labpose labeling page: <a href="{self.url}" target="_blank">{self.url}</a> '
                f"(every change is saved at once; <code>.stop()</code> ends it)")


_sessions = []


def label_frames(config, port=None, host="127.0.0.1", refine=False):
    """Serves the labeling page of the project in the background and returns a LabelingSession
    whose ``url`` (shown as a link in Jupyter) opens it. Nothing opens a browser. refine=True shows
    the network's predictions on outlier frames to accept or correct (DeepLabCut's
    refine_labels)."""
    server = _output.call(_labpose.LabelingServer, _path(config), str(host),
                          0 if port is None else int(port), bool(refine))
    session = LabelingSession(server)
    _sessions.append(session)
    return session


def refine_labels(config, port=None, host="127.0.0.1"):
    """label_frames with the network's predictions on the outlier frames (DeepLabCut's
    refine_labels)."""
    return label_frames(config, port=port, host=host, refine=True)


@atexit.register
def _stop_sessions():
    for session in _sessions:
        session.stop()

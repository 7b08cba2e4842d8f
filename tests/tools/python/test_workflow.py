"""The DeepLabCut workflow through `import labpose`: the same files as the labpose program writes,
Predictor equal to analyze, errors as labpose.Error, an interrupt that leaves a resumable run."""
import glob
import os
import signal
import threading
import time

import numpy
import pytest

import labpose
from conftest import cli, copy_project


def project_files(config, folder):
    """{relative path: contents} under the project's `folder`: bytes with the project's own path
    replaced, so that two copies of a project compare; HDF5 files as their tables (HDF5 records
    when each object was written)."""
    root = os.path.dirname(config)
    files = {}
    for path in sorted(glob.glob(os.path.join(root, folder, "**", "*"), recursive=True)):
        if not os.path.isfile(path):
            continue
        name = os.path.relpath(path, root)
        if path.endswith(".h5"):
            pandas = pytest.importorskip("pandas")
            files[name] = pandas.read_hdf(path).to_csv()
        else:
            with open(path, "rb") as f:
                files[name] = f.read().replace(root.encode(), b"<project>")
    return files


def test_training_set_is_the_programs(demo_project, tmp_path):
    ours = copy_project(demo_project, tmp_path / "python")
    theirs = copy_project(demo_project, tmp_path / "cli")
    labpose.create_training_dataset(ours, Shuffles=[1, 2], net_type="mobilenet_v2_0.35",
                                    weight_init="none", seed=5)
    for shuffle in (1, 2):
        cli("create-dataset", theirs, "--shuffle", shuffle, "--net", "mobilenet_v2_0.35",
            "--weights", "none", "--seed", 5)
    for folder in ("training-datasets", "labpose-models"):
        mine, program = project_files(ours, folder), project_files(theirs, folder)
        assert mine.keys() == program.keys() and mine, folder
        for name in mine:
            assert mine[name] == program[name], name


def test_extract_frames_is_the_programs(demo_project, tmp_path):
    video = glob.glob(os.path.join(os.path.dirname(demo_project), "videos", "*.mp4"))[0]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ours = labpose.create_new_project("mice", "python", [video], working_directory=tmp_path / "a",
                                      copy_videos=True)
    assert os.path.isfile(ours) and ours.endswith("config.yaml")
    theirs = cli("create", "mice", "python", video, "--dir", tmp_path / "b",
                 "--copy-videos").strip().splitlines()[-1]
    labpose.extract_frames(ours, algo="uniform", seed=3)
    cli("extract-frames", theirs, "--algo", "uniform", "--seed", 3)
    mine, program = project_files(ours, "labeled-data"), project_files(theirs, "labeled-data")
    assert mine == program and any(name.endswith(".png") for name in mine)


def test_analysis_is_the_programs_and_predictor_agrees(trained_project, tmp_path):
    config = trained_project
    video = glob.glob(os.path.join(os.path.dirname(config), "videos", "*.mp4"))[0]
    scorer = labpose.analyze_videos(config, [video], save_as_csv=True, destfolder=tmp_path / "py",
                                    device="cpu")
    assert scorer.startswith("DLC_mobnet_35_") and scorer.endswith("_120")
    stem = os.path.splitext(os.path.basename(video))[0]
    ours = tmp_path / "py" / f"{stem}{scorer}.csv"
    cli("analyze", config, video, "--csv", "--dest", tmp_path / "cli", "--device", "cpu")
    theirs = tmp_path / "cli" / f"{stem}{scorer}.csv"
    assert ours.read_bytes() == theirs.read_bytes()

    rows = numpy.loadtxt(ours, delimiter=",", skiprows=3)[:, 1:]  # frame, then x, y, p per part
    predictor = labpose.Predictor(config, device="cpu")
    assert predictor.bodyparts == ["snout", "leftear", "rightear", "tailbase"] or predictor.bodyparts
    frames = labpose.read_frames(video)
    assert frames.shape == (rows.shape[0], frames.shape[1], frames.shape[2], 3)
    poses = predictor.predict(frames)
    assert poses.dtype == numpy.float32 and poses.shape == (len(frames), len(predictor.bodyparts), 3)
    flat = poses.reshape(len(frames), -1)
    assert numpy.abs(flat - rows).max() <= 1e-4 * max(1.0, numpy.abs(rows).max())
    # DeepLabCut-Live's calls: one frame in, (J, 3) out.
    first = predictor.init_inference(frames[0])
    assert numpy.allclose(first, poses[0], atol=1e-4)
    assert numpy.allclose(predictor.get_pose(frames[5]), poses[5], atol=1e-4)
    # Another frame size rebuilds the plan and still runs.
    assert predictor.predict(frames[:3, :64, :80]).shape == (3, len(predictor.bodyparts), 3)

    # The same network exported, with the project out of sight: the same poses.
    folder = labpose.export_model(config, shuffle=1, destfolder=tmp_path / "exported",
                                  make_tar=False)
    assert os.path.isfile(os.path.join(folder, "model.safetensors"))
    exported = labpose.Predictor(folder, device="cpu")
    assert exported.scorer == scorer and exported.bodyparts == predictor.bodyparts
    assert numpy.abs(exported.predict(frames) - poses).max() <= 1e-4
    with pytest.raises(labpose.UsageError, match="exported model"):
        labpose.Predictor(folder, shuffle=2)


def test_evaluation_and_the_rest_of_the_loop(trained_project, tmp_path):
    config = trained_project
    results = labpose.evaluate_network(config, Shuffles=[1], device="cpu")
    pandas = pytest.importorskip("pandas")
    assert isinstance(results, pandas.DataFrame) and len(results) >= 1
    assert any("Test error" in column for column in results.columns)
    video = glob.glob(os.path.join(os.path.dirname(config), "videos", "*.mp4"))[0]
    labpose.analyze_videos(config, os.path.dirname(video), videotype=".mp4", device="cpu",
                           destfolder=tmp_path)
    labpose.filterpredictions(config, video, destfolder=tmp_path)
    assert glob.glob(str(tmp_path / "*_filtered.h5"))
    labpose.plot_trajectories(config, video, destfolder=tmp_path)
    assert glob.glob(str(tmp_path / "plot-poses" / "*" / "*.png"))
    labpose.create_labeled_video(config, video, destfolder=tmp_path)
    assert glob.glob(str(tmp_path / "*_labeled.mp4"))


def test_docstrings_carry_the_commands_help():
    assert "--max-iters" in labpose.train_network.__doc__
    assert "--csv" in labpose.analyze_videos.__doc__
    assert "snapshot" in labpose.Predictor.__doc__


def test_bad_arguments_raise_labpose_errors(trained_project, tmp_path):
    with pytest.raises(labpose.Error) as missing:
        labpose.train_network(tmp_path / "nowhere" / "config.yaml")
    assert "config.yaml" in str(missing.value) and missing.value.hint
    with pytest.raises(labpose.UsageError, match="n_tracks"):
        labpose.analyze_videos(trained_project, "video.mp4", n_tracks=2)
    with pytest.raises(labpose.UsageError, match="trainingsetindex"):
        labpose.train_network(trained_project, trainingsetindex=4)
    with pytest.raises(labpose.UsageError) as usage:
        labpose.train_network(trained_project, maxiters=-3)
    assert "--max-iters" in str(usage.value)
    with pytest.raises(TypeError):
        labpose.train_network(trained_project, no_such_argument=1)
    with pytest.raises(labpose.UsageError, match="individuals"):
        labpose.create_new_project("a", "b", "v.mp4", individuals=["m1", "m2"])
    predictor = labpose.Predictor(trained_project, device="cpu")
    with pytest.raises(labpose.UsageError, match="height, width, 3"):
        predictor.predict(numpy.zeros((2, 32, 32), numpy.uint8))
    with pytest.raises(labpose.UsageError, match="uint8"):
        predictor.predict(numpy.zeros((1, 32, 32, 3), numpy.float32))
    with pytest.raises(labpose.Error, match="shuffle 7"):
        labpose.Predictor(trained_project, shuffle=7, device="cpu")


def test_an_interrupt_saves_a_snapshot_to_resume_from(demo_project, tmp_path):
    config = copy_project(demo_project, tmp_path)
    labpose.create_training_dataset(config, Shuffles=[1], net_type="mobilenet_v2_0.35",
                                    weight_init="none")
    train_dir = glob.glob(os.path.join(os.path.dirname(config), "labpose-models", "*", "*", "train"))[0]
    stats = os.path.join(train_dir, "learning_stats.csv")

    def interrupt_once_training():
        while not os.path.exists(stats):  # the first display_iters row: training runs
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt_once_training, daemon=True)
    sender.start()
    with pytest.raises(KeyboardInterrupt) as stopped:
        labpose.train_network(config, maxiters=100000, displayiters=5, device="cpu", batch_size=2)
    sender.join()
    assert isinstance(stopped.value, labpose.Interrupted) and "resume" in stopped.value.hint
    snapshots = glob.glob(os.path.join(train_dir, "snapshot-*.safetensors"))
    assert snapshots
    iteration = max(int(os.path.basename(s).split("-")[-1].split(".")[0]) for s in snapshots)
    labpose.train_network(config, maxiters=iteration + 5, displayiters=5, device="cpu",
                          batch_size=2, resume=True)
    assert os.path.exists(os.path.join(train_dir, f"snapshot-{iteration + 5}.safetensors"))


def test_label_frames_serves_the_page_until_stopped(demo_project, tmp_path):
    import urllib.error
    import urllib.request

    config = copy_project(demo_project, tmp_path)
    session = labpose.label_frames(config)
    assert session.serving and session.url.startswith("http://127.0.0.1:")
    assert "token=" in session.url and session.url in session._repr_html_()
    # The token in the URL becomes a cookie on the way to the page.
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    with browser.open(session.url, timeout=30) as page:
        assert page.status == 200 and b"<html" in page.read().lower()
    session.stop()
    assert not session.serving and "stopped" in repr(session)
    with pytest.raises(urllib.error.URLError):
        browser.open(session.url, timeout=30)


def test_multi_animal_training_set_takes_deeplabcuts_paf_graph(tmp_path):
    """create_multianimaltraining_dataset: the default graph (every pair), the skeleton
    (paf_graph="config") and a list of index pairs, each as the program writes it."""
    config = cli("demo", "--project-only", "--animals", 2, "--dir", tmp_path, "--frames", 40,
                 "--labeled-frames", 8).strip().splitlines()[-1]
    graphs = {}
    for shuffle, graph in ((1, None), (2, "config"), (3, [[3, 0], [0, 1], [0, 2]])):
        labpose.create_multianimaltraining_dataset(config, Shuffles=[shuffle],
                                                   net_type="mobilenet_v2_0.35",
                                                   weight_init="none", paf_graph=graph)
        folder = [p for p in os.listdir(os.path.join(os.path.dirname(config), "labpose-models",
                                                     "iteration-0"))
                  if p.endswith(f"shuffle{shuffle}")][0]
        with open(os.path.join(os.path.dirname(config), "labpose-models", "iteration-0", folder,
                               "train", "pose_cfg.yaml")) as f:
            line = [l for l in f if l.startswith("partaffinityfield_graph:")][0]
        graphs[shuffle] = line.split(":", 1)[1].strip()
    # snout, leftear, rightear, tailbase; the demo's skeleton joins the ears to snout and tail base
    assert graphs[1] == "[[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]"
    assert graphs[2] == "[[0, 1], [0, 2], [1, 3], [2, 3]]"
    assert graphs[3] == "[[0, 3], [0, 1], [0, 2]]"
    with pytest.raises(labpose.Error, match="leaves .* unconnected"):
        labpose.create_multianimaltraining_dataset(config, Shuffles=[4],
                                                   net_type="mobilenet_v2_0.35",
                                                   weight_init="none", paf_graph=[[0, 1]])


def test_tracking_steps_give_the_single_pass_files(tmp_path, capfd):
    """analyze_videos(auto_track=False), convert_detections2tracklets and stitch_tracklets write the
    files analyze_videos writes in one pass; temporal_prior=False assembles each frame alone;
    arguments labpose cannot honour are refused."""
    config = cli("demo", "--project-only", "--animals", 3, "--dir", tmp_path, "--frames", 12,
                 "--labeled-frames", 6).strip().splitlines()[-1]
    labpose.create_multianimaltraining_dataset(config, Shuffles=[1], net_type="mobilenet_v2_0.35",
                                               weight_init="none")
    model = glob.glob(os.path.join(os.path.dirname(config), "labpose-models", "iteration-0", "*"))[0]
    pose_cfg = os.path.join(model, "train", "pose_cfg.yaml")
    with open(pose_cfg) as f:
        text = f.read().replace("crop_size: [256, 256]", "crop_size: [64, 64]")
    with open(pose_cfg, "w") as f:
        f.write(text)  # small crops: two quick steps
    labpose.train_network(config, shuffle=1, maxiters=2, saveiters=2, displayiters=1,
                          device="cpu", batch_size=2)
    with open(os.path.join(model, "test", "inference_cfg.yaml"), "a") as f:
        f.write("pafthreshold: 0.0\nminimalnumberofconnections: 1\n")  # link a barely trained net
    video = os.path.join(os.path.dirname(config), "videos", "synthetic_mice.mp4")
    labpose.analyze_videos(config, [video], destfolder=tmp_path / "once", save_as_csv=True,
                           device="cpu")
    labpose.analyze_videos(config, [video], destfolder=tmp_path / "steps", auto_track=False,
                           device="cpu")
    assert glob.glob(str(tmp_path / "steps" / "*_assemblies.pickle"))
    assert not glob.glob(str(tmp_path / "steps" / "*_el.pickle"))
    assert "each frame assembled alone" not in capfd.readouterr().err
    labpose.analyze_videos(config, [video], destfolder=tmp_path / "alone", auto_track=False,
                           device="cpu", temporal_prior=False)
    assert "each frame assembled alone" in capfd.readouterr().err
    assert glob.glob(str(tmp_path / "alone" / "*_assemblies.pickle"))
    labpose.convert_detections2tracklets(config, [video], destfolder=tmp_path / "steps")
    labpose.stitch_tracklets(config, [video], destfolder=tmp_path / "steps", save_as_csv=True)
    for suffix in ("_el.pickle", "_el.csv"):
        once, = glob.glob(str(tmp_path / "once" / f"*{suffix}"))
        steps, = glob.glob(str(tmp_path / "steps" / f"*{suffix}"))
        with open(once, "rb") as a, open(steps, "rb") as b:
            assert a.read() == b.read(), suffix
    labpose.convert_detections2tracklets(config, [video], destfolder=tmp_path / "steps",
                                         track_method="box")
    assert glob.glob(str(tmp_path / "steps" / "*_bx.pickle"))
    with pytest.raises(labpose.UsageError, match="track_method='skeleton'"):
        labpose.convert_detections2tracklets(config, [video], track_method="skeleton")
    with pytest.raises(labpose.UsageError, match="transformer_checkpoint"):
        labpose.stitch_tracklets(config, [video], transformer_checkpoint="reid.pt")
    with pytest.raises(labpose.Error, match="_assemblies.pickle"):
        labpose.convert_detections2tracklets(config, [video], destfolder=tmp_path / "nothing")

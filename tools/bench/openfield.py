#!/usr/bin/python3
"""Learning curves on the real DeepLabCut project (openfield-Pranav-2018-10-30: 116 labeled frames,
4 bodyparts, 640x480): labpose trained from scratch on this machine's CPU against the PyTorch peer
(../shared/bench/openfield_peer.py) on the same split, one after the other, for the same wall time.

For each split (DeepLabCut's 95/5 and 80/20 by default) it copies the project into --work, sets its
TrainingFraction, runs `labpose create-dataset` (the split is drawn and saved there), writes labpose's
recipe into the shuffle's train/pose_cfg.yaml, runs `labpose train --max-minutes M`, then gives the peer
the saved test images (`--test-images`) for the same M minutes. It prints the mean test error of both at
the checkpoints (the last evaluation at or before each) and writes every curve to --work/curves.csv.

    /usr/bin/python3 tools/bench/openfield.py --labpose build/tools/labpose --minutes 30

With --transfer WEIGHTS (efficientnet_lite0 ImageNet weights from tools/convert_weights.py) it compares
transfer learning instead, labpose only: efficientnet_lite0 from those weights (backbone frozen for the
first --unfreeze-fraction of the iterations, batch norm in inference mode meanwhile), the same network from
scratch, and mobilenet_v2_0.35 from scratch, each for the same wall time on the same split.

With --defaults it measures what a new user gets: efficientnet_lite0 (or --net) from the ImageNet weights
in the `labpose weights` cache with the pose_cfg.yaml create-dataset writes (the fine-tuning recipe) and the
schedule fitted to --minutes (`schedule: time`), against the same network from scratch
(`--weights none`), each for the same wall time on the same split. Only the evaluation cadence (about
--eval-minutes) is set; `--set key=value` changes one more pose_cfg.yaml value of both (repeatable).

Only the standard library; the peer needs Debian's python3-torch and python3-opencv. Run it on a quiet
machine: both programs use every core.
"""
import argparse
import csv
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER_NETS = {"mobilenet_v2_0.35": "mnv2_035", "mobilenet_v2_1.0": "mnv2_100", "resnet_50": "resnet50"}
LABPOSE_NETS = sorted(PEER_NETS) + [f"efficientnet_lite{n}" for n in range(5)]


def run(cmd, log_path, env=None):
    """Runs cmd with stdout+stderr into log_path; returns its exit status and the seconds it took."""
    print("  $ " + " ".join(cmd), flush=True)
    start = time.monotonic()
    with open(log_path, "w") as log:
        status = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    return status, time.monotonic() - start


@functools.lru_cache(maxsize=None)
def training_speed(labpose, net, crop, batch):
    """Iterations per minute of one training step, from `labpose bench --train`; measured once per
    network, crop and batch, so runs that differ only in their weights evaluate at the same cadence."""
    out = subprocess.check_output([labpose, "--quiet", "bench", "--arch", net, "--size", f"{crop}x{crop}",
                                   "--batch", str(batch), "--train", "--repeats", "5", "--json"], text=True)
    images_per_second = json.loads(out.strip().splitlines()[-1])["fps"]
    return images_per_second / batch * 60.0


def set_training_fraction(config_path, fraction):
    text = open(config_path).read()
    new, count = re.subn(r"(?m)^TrainingFraction:\n(- .*\n)+", f"TrainingFraction:\n- {fraction}\n", text)
    if count != 1:
        sys.exit(f"error: {config_path}: no block-list TrainingFraction to change")
    open(config_path, "w").write(new)


def pose_value(text, key):
    """The value of a top-level `key: value` line of a pose_cfg.yaml's text."""
    return re.search(rf"(?m)^{key}: (.*)$", text).group(1)


def set_pose_config(path, values):
    text = open(path).read()
    for key, value in values.items():
        text, count = re.subn(rf"(?m)^{key}: .*$", f"{key}: {value}", text)
        if count != 1:
            sys.exit(f"error: {path}: no line '{key}: ...'")
    open(path, "w").write(text)


def labpose_curve(stats_path):
    """[(minutes, mean test error)] from learning_stats.csv."""
    curve = []
    with open(stats_path) as f:
        for row in csv.DictReader(f):
            if row["test_error"] not in ("", "nan"):
                curve.append((float(row["seconds"]) / 60.0, float(row["test_error"])))
    return curve


def peer_curve(log_path):
    """[(minutes, mean test error)] from the peer's log lines 't=X min ... test rmse=Y'."""
    curve = []
    for line in open(log_path):
        m = re.search(r"t=([0-9.]+) min .*test rmse=([0-9.]+|nan)", line)
        if m and m.group(2) != "nan":
            curve.append((float(m.group(1)), float(m.group(2))))
    return curve


def at(curve, minutes, end):
    """The error of the last evaluation at or before `minutes` (12 s of slack for the evaluation itself);
    at the end of the run, the final evaluation (both programs evaluate once more when time is up)."""
    if curve and minutes >= end:
        return curve[-1][1]
    before = [e for t, e in curve if t <= minutes + 0.2]
    return before[-1] if before else None


def make_training_set(labpose, data, work, fraction, project, name, net, options):
    """A fresh copy of the project with TrainingFraction `fraction` and shuffle 1 of `net`; returns the
    create-dataset log."""
    config = os.path.join(project, "config.yaml")
    shutil.rmtree(project, ignore_errors=True)
    shutil.copytree(data, project, symlinks=True)
    set_training_fraction(config, fraction)
    log = os.path.join(work, f"create-dataset-{name}.log")
    status, _ = run([labpose, "create-dataset", config, "--net", net, "--shuffle", "1"] + options, log)
    if status != 0:
        sys.exit(f"error: create-dataset failed, see {log}")
    return log


def train_labpose(a, labpose, data, work, fraction, project, suffix, net, weights, settings):
    """Copies the project, makes the split and trains `net` (from `weights` when given) for a.minutes with
    the extra pose_cfg.yaml `settings`; returns labpose's learning curve and the file listing the test
    images."""
    percent = int(100 * fraction)
    name = f"{percent}{suffix}"
    models = os.path.join(project, "labpose-models", "iteration-0")
    config = os.path.join(project, "config.yaml")
    if not a.skip_labpose and a.defaults:
        log = make_training_set(labpose, data, work, fraction, project, name, net,
                                ["--weights", "none"] if weights == "none" else [])
        if weights == "cache" and "will start from its ImageNet weights" not in open(log).read():
            sys.exit(f"error: no cached ImageNet weights of {net}; run: labpose weights fetch {net}")
    elif not a.skip_labpose:
        per_minute = training_speed(labpose, net, a.crop, a.batch)
        # The schedule is in iterations: aim at the wall time, a little short for the evaluations and the
        # loader; --max-minutes stops training at the wall time whatever the speed turns out to be.
        iters = int(per_minute * a.minutes * 0.98)
        drop = int(iters * 0.75)
        print(f"  labpose {net} trains {per_minute:.0f} iterations/min at {a.crop}x{a.crop}, batch {a.batch}: "
              f"{iters} iterations, learning rate {a.lr:g} then {a.lr / 10:g} from iteration {drop}", flush=True)
        if "freeze_backbone_stages" in settings:
            settings = dict(settings, unfreeze_backbone_after=max(1, int(iters * a.unfreeze_fraction)))
        make_training_set(labpose, data, work, fraction, project, name, net,
                          ["--weights", weights or "none"])
    model = [d for d in os.listdir(models) if d.endswith(f"trainset{percent}shuffle1")][0]
    train_dir = os.path.join(models, model, "train")
    pose_cfg = os.path.join(train_dir, "pose_cfg.yaml")
    split = pose_value(open(pose_cfg).read(), "split")
    test_images = json.load(open(os.path.join(project, split)))["test"]
    test_list = os.path.join(work, f"test-images-{name}.txt")
    with open(test_list, "w") as f:
        f.write("\n".join(test_images) + "\n")

    if not a.skip_labpose and a.defaults:
        # The speed at create-dataset's crop_size and batch_size, or at what --set gives instead.
        written = open(pose_cfg).read()
        crop = int(re.findall(r"\d+", str(settings.get("crop_size", pose_value(written, "crop_size"))))[0])
        batch = int(settings.get("batch_size", pose_value(written, "batch_size")))
        per_minute = training_speed(labpose, net, crop, batch)
        print(f"  labpose {net} trains about {per_minute:.0f} iterations/min at {crop}x{crop}, batch {batch}",
              flush=True)
        cadence = max(1, int(per_minute * a.eval_minutes))
        set_pose_config(pose_cfg, dict({"evaluate_iters": cadence, "display_iters": cadence}, **settings))
    elif not a.skip_labpose:
        set_pose_config(pose_cfg, dict({
            "batch_size": a.batch,
            "multi_step": f"[[{a.lr:g}, {drop}], [{a.lr / 10:g}, {iters}]]",
            "max_iters": iters,
            "evaluate_iters": max(1, int(per_minute * a.eval_minutes)),
            "display_iters": max(1, int(per_minute * a.eval_minutes)),
            "save_iters": iters,
            "keep_snapshots": 1,
            "crop_size": f"[{a.crop}, {a.crop}]",
        }, **settings))
    if not a.skip_labpose:
        status, seconds = run([labpose, "--quiet", "train", config, "--max-minutes", str(a.minutes)],
                              os.path.join(work, f"labpose-{name}.log"))
        if status != 0:
            sys.exit(f"error: labpose train failed, see {work}/labpose-{name}.log")
        print(f"  labpose trained for {seconds / 60:.1f} min", flush=True)
    return labpose_curve(os.path.join(train_dir, "learning_stats.csv")), test_list


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labpose", default=os.path.join(ROOT, "build", "tools", "labpose"))
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "openfield-Pranav-2018-10-30"))
    ap.add_argument("--peer", default=os.path.join(ROOT, "..", "shared", "bench", "openfield_peer.py"))
    ap.add_argument("--work", default="openfield-bench", help="folder for the project copies and logs")
    ap.add_argument("--net", choices=LABPOSE_NETS,
                    help="the network (mobilenet_v2_0.35; with --defaults, efficientnet_lite0)")
    ap.add_argument("--splits", default="0.95,0.8", help="training fractions, comma-separated")
    ap.add_argument("--minutes", type=float, default=30.0, help="wall time of each training run")
    ap.add_argument("--checkpoints", default="15,30", help="minutes at which errors are compared")
    ap.add_argument("--crop", type=int, default=256, help="labpose's training crop (the peer uses 320)")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1e-3, help="AdamW learning rate; x0.1 for the last quarter")
    ap.add_argument("--eval-minutes", type=float, default=1.0, help="minutes between labpose's test evaluations")
    ap.add_argument("--peer-eval-minutes", type=float, default=2.5,
                    help="minutes between the peer's evaluations (each takes it ~10 s of its training time)")
    ap.add_argument("--skip-peer", action="store_true")
    ap.add_argument("--skip-labpose", action="store_true")
    ap.add_argument("--transfer", metavar="WEIGHTS",
                    help="compare efficientnet_lite0 from these ImageNet weights with it and mobilenet_v2_0.35 "
                         "from scratch (no peer)")
    ap.add_argument("--configurations", default="lite0-pretrained,lite0-scratch,mnv2_035-scratch",
                    help="--transfer: which of the three to run, comma-separated")
    ap.add_argument("--freeze-stages", type=int, default=9, help="--transfer: backbone stages frozen at first")
    ap.add_argument("--unfreeze-fraction", type=float, default=0.1,
                    help="--transfer: the fraction of the iterations before the backbone trains too")
    ap.add_argument("--backbone-lr-multiplier", type=float, default=1.0,
                    help="--transfer: the backbone's learning rate as a multiple of the head's")
    ap.add_argument("--defaults", action="store_true",
                    help="the default path (efficientnet_lite0, cached ImageNet weights, create-dataset's "
                         "recipe, time schedule) against the same network from scratch (no peer)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="--defaults: one more pose_cfg.yaml value of every run (repeatable)")
    a = ap.parse_args()
    if a.net is None:
        a.net = "efficientnet_lite0" if a.defaults else "mobilenet_v2_0.35"
    if a.net not in PEER_NETS and not a.skip_peer and not a.transfer and not a.defaults:
        sys.exit(f"error: the peer has no {a.net}; add --skip-peer")

    labpose = os.path.abspath(a.labpose)
    data = os.path.abspath(a.data)
    if not os.path.isfile(os.path.join(data, "config.yaml")):
        sys.exit(f"error: {data}: no DeepLabCut project there (config.yaml missing)\n"
                 "hint: pass --data with the openfield-Pranav-2018-10-30 folder")
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    checkpoints = [float(c) for c in a.checkpoints.split(",")]

    # (label, network, weights or None, pose_cfg.yaml settings besides the schedule)
    if a.defaults:
        extra = dict(item.split("=", 1) for item in a.set)
        configurations = [("default", a.net, "cache", extra), ("scratch", a.net, "none", extra)]
        wanted = a.configurations.split(",") if a.configurations != ap.get_default("configurations") else \
            ["default", "scratch"]
        configurations = [c for c in configurations if c[0] in wanted]
        a.skip_peer = True
    elif a.transfer:
        weights = os.path.abspath(a.transfer)
        configurations = [("lite0-pretrained", "efficientnet_lite0", weights,
                           {"freeze_backbone_stages": a.freeze_stages,
                            "backbone_lr_multiplier": a.backbone_lr_multiplier}),
                          ("lite0-scratch", "efficientnet_lite0", None, {}),
                          ("mnv2_035-scratch", "mobilenet_v2_0.35", None, {})]
        wanted = a.configurations.split(",")
        unknown = set(wanted) - {c[0] for c in configurations}
        if unknown:
            sys.exit(f"error: --configurations: no {', '.join(sorted(unknown))} "
                     "(use lite0-pretrained, lite0-scratch, mnv2_035-scratch)")
        configurations = [c for c in configurations if c[0] in wanted]
        a.skip_peer = True
    else:
        configurations = [("labpose", a.net, None, {})]

    results = []  # (split, program, curve)
    for fraction in [float(s) for s in a.splits.split(",")]:
        percent = int(100 * fraction)
        test_sets = set()
        for label, net, weights, settings in configurations:
            suffix = "" if label == "labpose" else "-" + label
            project = os.path.join(work, f"openfield-{percent}{suffix}")
            print(f"== split {percent}/{100 - percent}, {label} ({net}): {project}", flush=True)
            curve, test_list = train_labpose(a, labpose, data, work, fraction, project, suffix, net, weights,
                                             settings)
            results.append((percent, label, curve))
            test_sets.add(open(test_list).read())
        if len(test_sets) != 1:
            sys.exit(f"error: the configurations of split {percent} got different test images")
        peer_log = os.path.join(work, f"peer-{percent}.log")
        if not a.skip_peer:
            status, seconds = run(["/usr/bin/python3", os.path.abspath(a.peer), project, "--net",
                                   PEER_NETS[a.net], "--minutes", str(a.minutes), "--eval-every",
                                   str(a.peer_eval_minutes * 60), "--test-images", test_list], peer_log)
            if status != 0:
                sys.exit(f"error: the peer failed, see {peer_log}")
            print(f"  the peer trained for {seconds / 60:.1f} min", flush=True)
        if os.path.exists(peer_log) and not a.transfer and not a.defaults:
            results.append((percent, "peer", peer_curve(peer_log)))

    with open(os.path.join(work, "curves.csv"), "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["split", "program", "minutes", "test_error_px"])
        for percent, program, curve in results:
            for t, e in curve:
                out.writerow([f"{percent}/{100 - percent}", program, f"{t:.2f}", f"{e:.2f}"])

    what = ("the default path against from scratch" if a.defaults else
            "transfer learning" if a.transfer else f"{a.net}, from scratch")
    print(f"\nmean test error in pixels ({what}, this CPU), at the last evaluation at or before each time:")
    print("split   program          " + "".join(f"{c:>8g} min" for c in checkpoints))
    for percent, program, curve in results:
        errors = [at(curve, c, a.minutes) for c in checkpoints]
        cells = "".join(f"{e:>12.2f}" if e is not None else f"{'-':>12}" for e in errors)
        print(f"{percent}/{100 - percent:<4} {program:<17}{cells}")
    print(f"curves: {os.path.join(work, 'curves.csv')}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The sweep measurement of docs/sweeps.md on DeepLabCut's openfield project (116 labeled frames,
4 bodyparts), 80/20 split: a successive-halving sweep with a total budget of --budget minutes of
--minutes-per-trial trials over the learning rate, batch size, crop, network (mobilenet_v2_0.35 from
scratch, efficientnet_lite0 from its ImageNet weights) and the unfreeze point; then the default
recipe (efficientnet_lite0 from its ImageNet weights, what create-dataset writes) trained for the
same --minutes-per-trial on all the training images. It prints the sweep's table, the chosen trial's
test error (measured once by the sweep, on the snapshot chosen by validation error), the default
recipe's test error (its last snapshot, and the one evaluate picks by test error), and how many
trials halving examined against a grid of the same budget.

    /usr/bin/python3 tools/bench/sweep_openfield.py --labpose build/tools/labpose

Needs the ImageNet weights of efficientnet_lite0 in labpose's cache (labpose weights fetch
efficientnet_lite0) and ../shared/data. Only the standard library. Run it on a quiet machine: every
trial uses every core, and trials are compared at equal training time.
"""
import argparse
import csv
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPACE = """# The openfield measurement of docs/sweeps.md.
lr: {log_uniform: [3.0e-4, 3.0e-3]}
batch_size: [4, 8, 16]
crop_size: [224, 256, 320]
# efficientnet_lite0 from its ImageNet weights (the base's); mobilenet_v2_0.35 from scratch
net_type: [mobilenet_v2_0.35, efficientnet_lite0]
# the unfreeze point: 5, 10 or 20 % of the run
unfreeze_backbone_after: [500, 1000, 2000]
"""


def run(cmd, log_path):
    """Runs cmd with stdout+stderr into log_path; exits when it fails."""
    print("  $ " + " ".join(cmd), flush=True)
    with open(log_path, "w") as log:
        status = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
    if status != 0:
        sys.exit(f"error: {cmd[1]} failed (status {status}), see {log_path}")
    with open(log_path) as log:
        return log.read()


def set_keys(path, values):
    with open(path) as f:
        text = f.read()
    for key, value in values.items():
        text = re.sub(rf"(?m)^{key}:.*$", f"{key}: {value}", text)
    with open(path, "w") as f:
        f.write(text)


def test_errors(evaluate_output):
    """(snapshot, test px) rows of `labpose evaluate`'s summary table."""
    rows = []
    for line in evaluate_output.splitlines():
        cells = line.split()
        if len(cells) >= 5 and cells[0].isdigit() and cells[2].startswith("snapshot-"):
            rows.append((cells[2], cells[4]))
    return rows


def prepare(a, labpose, project, config, space):
    """A fresh copy of the project with an 80/20 split, shuffle 1 from the default recipe, the space."""
    if os.path.exists(a.work):
        shutil.rmtree(a.work)
    shutil.copytree(a.project, project, ignore=shutil.ignore_patterns("dlc-models*", "labpose-*", "sweeps"))
    with open(config) as f:
        text = f.read()
    text = re.sub(r"(?m)^TrainingFraction:\n(- .*\n)+", "TrainingFraction:\n- 0.8\n", text)
    with open(config, "w") as f:
        f.write(text)
    run([labpose, "create-dataset", config, "--net", "efficientnet_lite0", "--shuffle", "1"],
        os.path.join(a.work, "create-dataset.log"))
    models = os.path.join(project, "labpose-models", "iteration-0")
    base = os.path.join(models, os.listdir(models)[0], "train", "pose_cfg.yaml")
    with open(base) as f:
        if not re.search(r"(?m)^init_weights: \S", f.read()):
            sys.exit("error: efficientnet_lite0 has no ImageNet weights in the cache: "
                     "labpose weights fetch efficientnet_lite0")
    set_keys(base, {"evaluate_iters": a.evaluate_iters, "display_iters": a.evaluate_iters})
    with open(space, "w") as f:
        f.write(SPACE)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labpose", default=os.path.join(ROOT, "build", "tools", "labpose"))
    ap.add_argument("--project", default=os.path.join(ROOT, "..", "shared", "data", "openfield-Pranav-2018-10-30"))
    ap.add_argument("--work", default="/tmp/labpose-sweep-openfield")
    ap.add_argument("--budget", type=float, default=90.0, help="training minutes of all trials (default 90)")
    ap.add_argument("--minutes-per-trial", type=float, default=15.0)
    ap.add_argument("--evaluate-iters", type=int, default=80,
                    help="test/validation cadence in iterations (80: about a minute of efficientnet_lite0)")
    ap.add_argument("--resume", action="store_true",
                    help="continue the sweep already begun in --work (after a reboot or a kill) instead of "
                         "starting again")
    a = ap.parse_args()
    labpose = os.path.abspath(a.labpose)
    project = os.path.join(a.work, "openfield")
    config = os.path.join(project, "config.yaml")
    space = os.path.join(a.work, "space.yaml")
    if a.resume and os.path.exists(space):
        print(f"resuming the sweep begun in {a.work}", flush=True)
    else:
        prepare(a, labpose, project, config, space)

    print(f"sweep: {a.budget:g} minutes of {a.minutes_per_trial:g}-minute trials", flush=True)
    sweep_log = run([labpose, "sweep", config, "--space", space, "--name", "openfield", "--algo", "halving",
                     "--budget-minutes", str(a.budget), "--minutes-per-trial", str(a.minutes_per_trial),
                     "--devices", "cpu"],
                    os.path.join(a.work, "sweep-resumed.log" if a.resume else "sweep.log"))
    print(f"default recipe: train shuffle 1 for {a.minutes_per_trial:g} minutes", flush=True)
    run([labpose, "train", config, "--shuffle", "1", "--device", "cpu", "--max-minutes", str(a.minutes_per_trial)],
        os.path.join(a.work, "default-train.log"))
    default_all = test_errors(run([labpose, "evaluate", config, "--shuffle", "1", "--snapshot", "all"],
                                  os.path.join(a.work, "default-evaluate.log")))

    table_start = sweep_log.find("trial  ")
    print("\n" + (sweep_log[table_start:] if table_start >= 0 else sweep_log[-3000:]))
    folder = os.path.join(project, "sweeps", "openfield")
    with open(os.path.join(folder, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    per_trial = a.minutes_per_trial
    print(f"halving examined {len(rows)} trials; a grid with the same budget trains "
          f"{int(a.budget // per_trial)} trials of {per_trial:g} minutes")
    chosen = [row for row in rows if row["test_error"]]
    if chosen:
        print(f"chosen: trial {chosen[0]['trial']} (shuffle {chosen[0]['shuffle']}): test error "
              f"{chosen[0]['test_error']} px (its snapshot chosen by validation error)")
    regular = [(s, e) for s, e in default_all if not s.startswith("snapshot-best")]
    best = [(s, e) for s, e in default_all if s.startswith("snapshot-best")]
    if regular:
        last = max(regular, key=lambda row: int(row[0].split("-")[-1]))
        print(f"default recipe: test error {last[1]} px at its last snapshot ({last[0]})")
    if best:
        print(f"default recipe: test error {best[0][1]} px at {best[0][0]} (chosen by test error, as "
              f"evaluate's default)")


if __name__ == "__main__":
    main()

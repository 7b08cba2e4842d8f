#!/usr/bin/python3
"""Two builds of labpose on the same work, in one run: are the files the same, and is either slower?

For a change that must not alter behaviour (a restructure, a refactor), run the old binary and the
new one on the same demo project — create-dataset, train, evaluate, analyze — and on the openfield
project when --openfield is given (train and evaluate), then compare every file they wrote byte for
byte, except where they hold times: a snapshot's training seconds, learning_stats.csv's time column,
_meta.json and _meta.pickle, and HDF5 tables (compared as pandas reads them). Speeds are measured alternately, old then new, --repeats times: the
wall time of `train --max-iters N` and the frames/s of `analyze` (from its _meta.json). Compare the
ratios only: the machine may be busy. Training is pinned to fp32: training's default, auto, measures
the CPU at each start and may take bf16 in one run and fp32 in the other.

    /usr/bin/python3 tools/bench/compare_builds.py --old /tmp/old/labpose --new build/tools/labpose \
        [--openfield ../shared/data/openfield-Pranav-2018-10-30] [--repeats 3] [--iters 60]

The standard library, and Debian's python3-pandas for the .h5 files.
"""
import argparse
import csv
import filecmp
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(binary, *arguments, env=None):
    command = [binary, "--quiet", *arguments]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"$ {' '.join(command)}\nfailed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout, time.monotonic() - started


def only_folder(parent):
    entries = sorted(os.listdir(parent))
    if len(entries) != 1:
        sys.exit(f"{parent}: expected one shuffle folder, found {entries}")
    return os.path.join(parent, entries[0])


def timeless_csv(path):
    """Rows of a CSV without the columns that hold times or dates."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return rows
    drop = {i for i, name in enumerate(rows[0]) if name.lower() in ("time", "seconds", "date")}
    return [[v for i, v in enumerate(r) if i not in drop] for r in rows]


def safetensors_parts(path):
    """A safetensors file's header (the run's duration left out, and the precision it trained in,
    which builds from before 2026-12-02 do not record) and its tensor bytes."""
    with open(path, "rb") as f:
        data = f.read()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    for key in ("seconds", "precision", "precision_memory"):
        header.get("__metadata__", {}).pop(key, None)
    return header, data[8 + size:]


def same_table(a, b):
    """HDF5 tables hold their write times: compare what pandas reads (Debian's python3-pandas)."""
    import pandas  # only needed for .h5 files
    return pandas.read_hdf(a).equals(pandas.read_hdf(b))


def same_file(a, b):
    name = os.path.basename(a)
    if name.endswith(".safetensors"):
        return safetensors_parts(a) == safetensors_parts(b)
    if name.endswith(".h5"):
        return same_table(a, b)
    if name.endswith("_meta.json") or name.endswith("_meta.pickle") or name.endswith(".log"):
        return True  # run times and dates
    if name == "learning_stats.csv" or name.endswith("-results.csv"):
        return timeless_csv(a) == timeless_csv(b)
    return filecmp.cmp(a, b, shallow=False)


def compare_trees(old, new):
    """The files that differ or exist on one side only, relative to the tree roots."""
    problems = []
    for folder, _, files in os.walk(old):
        for name in files:
            a = os.path.join(folder, name)
            relative = os.path.relpath(a, old)
            b = os.path.join(new, relative)
            if not os.path.exists(b):
                problems.append(f"only in old: {relative}")
            elif not same_file(a, b):
                problems.append(f"differs: {relative}")
    for folder, _, files in os.walk(new):
        for name in files:
            relative = os.path.relpath(os.path.join(folder, name), new)
            if not os.path.exists(os.path.join(old, relative)):
                problems.append(f"only in new: {relative}")
    return problems


def demo_workflow(binary, project_copy, iters):
    config = os.path.join(project_copy, "config.yaml")
    run(binary, "create-dataset", config, "--net", "mobilenet_v2_0.35", "--weights", "none")
    _, train_seconds = run(binary, "train", config, "--device", "cpu", "--precision", "fp32", "--max-iters", str(iters))
    run(binary, "evaluate", config, "--device", "cpu", "--snapshot", "all")
    video = os.path.join(project_copy, "videos")
    run(binary, "analyze", config, video, "--device", "cpu", "--csv")
    return train_seconds


def analyze_fps(binary, config, video, dest):
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    run(binary, "analyze", config, video, "--device", "cpu", "--dest", dest, "--overwrite")
    meta = [f for f in os.listdir(dest) if f.endswith("_meta.json")]
    with open(os.path.join(dest, meta[0])) as f:
        data = json.load(f)
    for key in ("frames_per_second", "fps"):
        if key in data:
            return float(data[key])
    analysis = data.get("analysis", {})
    return float(analysis.get("frames_per_second", analysis.get("fps", 0.0)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", default=os.path.join(ROOT, "build", "tools", "labpose"))
    ap.add_argument("--openfield")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--work")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="labpose-compare-")
    builds = {"old": os.path.abspath(a.old), "new": os.path.abspath(a.new)}
    print(f"work folder: {work}", flush=True)

    os.makedirs(os.path.join(work, "made"), exist_ok=True)
    out, _ = run(builds["old"], "demo", "--project-only", "--dir", os.path.join(work, "made"),
                 "--frames", str(a.frames))
    source = os.path.dirname(out.splitlines()[0])
    failures = 0
    for label in ("demo", "openfield") if a.openfield else ("demo",):
        trees = {}
        for build, binary in builds.items():
            # Both builds work in the same folder (files may hold absolute paths), moved aside after.
            tree = os.path.join(work, "run", label)
            shutil.copytree(a.openfield if label == "openfield" else source, tree, symlinks=True)
            if label == "demo":
                demo_workflow(binary, tree, a.iters)
            else:
                config = os.path.join(tree, "config.yaml")
                run(binary, "create-dataset", config, "--shuffle", "1", "--net", "mobilenet_v2_0.35",
                    "--weights", "none", "--force")
                run(binary, "train", config, "--device", "cpu", "--precision", "fp32", "--max-iters", str(a.iters))
                run(binary, "evaluate", config, "--device", "cpu", "--snapshot", "all")
            trees[build] = os.path.join(work, label, build)
            os.makedirs(os.path.dirname(trees[build]), exist_ok=True)
            os.rename(tree, trees[build])
        problems = compare_trees(trees["old"], trees["new"])
        print(f"{label}: {'same files' if not problems else f'{len(problems)} differences'}")
        for p in problems[:20]:
            print("  " + p)
        failures += len(problems)

    config = os.path.join(work, "demo", "old", "config.yaml")
    video = os.path.join(work, "demo", "old", "videos")
    train_times = {"old": [], "new": []}
    fps = {"old": [], "new": []}
    for r in range(a.repeats):
        for build, binary in builds.items():
            tree = os.path.join(work, "speed", build)
            shutil.rmtree(tree, ignore_errors=True)
            shutil.copytree(source, tree, symlinks=True)
            train_times[build].append(demo_workflow_train_only(binary, tree, a.iters))
            fps[build].append(analyze_fps(binary, config, video, os.path.join(work, "fps", build)))
        print(f"round {r + 1}: train {train_times['old'][-1]:.1f} s / {train_times['new'][-1]:.1f} s, "
              f"analyze {fps['old'][-1]:.1f} / {fps['new'][-1]:.1f} frames/s (old / new)", flush=True)
    if a.repeats == 0:
        return 1 if failures else 0
    t_old, t_new = statistics.median(train_times["old"]), statistics.median(train_times["new"])
    f_old, f_new = statistics.median(fps["old"]), statistics.median(fps["new"])
    print(f"train {a.iters} iterations (median): old {t_old:.1f} s, new {t_new:.1f} s, "
          f"new/old {t_new / t_old:.3f}")
    print(f"analyze (median): old {f_old:.1f} frames/s, new {f_new:.1f} frames/s, "
          f"new/old {f_new / f_old:.3f}")
    return 1 if failures else 0


def demo_workflow_train_only(binary, tree, iters):
    config = os.path.join(tree, "config.yaml")
    run(binary, "create-dataset", config, "--net", "mobilenet_v2_0.35", "--weights", "none")
    _, seconds = run(binary, "train", config, "--device", "cpu", "--precision", "fp32", "--max-iters", str(iters))
    return seconds


if __name__ == "__main__":
    sys.exit(main())

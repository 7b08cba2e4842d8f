#!/usr/bin/python3
"""Data-parallel training speed on one machine: `labpose train` as 2 MPI ranks of 1 CPU thread each
against 1 process of 2 threads, the same network, crop and global batch, one after the other; then the
ranks again with sync_batch_norm. Prints the images/s of each (over the steady steps, from
learning_stats.csv's per-step times), the ranks' ratio to the process, and the gradient exchange of
the ranks (per-rank batch norm): its time per step and how much of it backward hid.

    /usr/bin/python3 tools/bench/data_parallel.py --labpose build/tools/labpose

The project is the demo's synthetic mouse (`labpose demo --project-only`), trained from scratch; only
the speed is measured. Needs Open MPI's mpirun (tools/install-deps.sh). Run it on a quiet machine.
"""
import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

from openfield import set_pose_config  # beside this script


def run(cmd, env=None):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({result.returncode}):\n{result.output[-3000:]}")
    return result.stdout


def images_per_second(train_dir, batch, skip):
    """The global batch over the seconds of the steps after the first `skip` (start-up excluded)."""
    rows = list(csv.DictReader(open(os.path.join(train_dir, "learning_stats.csv"))))
    first, last = rows[skip - 1], rows[-1]
    steps = int(last["iteration"]) - int(first["iteration"])
    return steps * batch / (float(last["seconds"]) - float(first["seconds"]))


def clear(train_dir):
    for name in os.listdir(train_dir):
        if name.startswith("snapshot-") or name == "learning_stats.csv":
            os.remove(os.path.join(train_dir, name))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labpose", default="build/tools/labpose")
    parser.add_argument("--nets", default="resnet_50,mobilenet_v2_0.35")
    parser.add_argument("--size", type=int, default=400, help="training crop (square)")
    parser.add_argument("--batch", type=int, default=8, help="the global batch")
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--skip", type=int, default=2, help="start-up steps left out of the rate")
    parser.add_argument("--work", help="folder for the projects (default: a temporary one)")
    a = parser.parse_args()
    labpose = os.path.abspath(a.labpose)
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        sys.exit("error: no mpirun; install Open MPI (tools/install-deps.sh)")
    work = a.work or tempfile.mkdtemp(prefix="labpose-data-parallel-")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    print(f"{'network':20s} {'1x2 threads':>12s} {'2x1 thread':>11s} {'ratio':>6s} "
          f"{'exchange/step':>14s} {'waited/step':>12s} {'hidden':>7s} {'2x1 sync BN':>12s} "
          f"{'ratio':>6s}", flush=True)
    for net in a.nets.split(","):
        folder = os.path.join(work, net)
        os.makedirs(folder, exist_ok=True)
        config = run([labpose, "--quiet", "demo", "--project-only", "--dir", folder, "--frames", "60",
                      "--labeled-frames", "12"]).strip().splitlines()[0]
        run([labpose, "--quiet", "create-dataset", config, "--net", net, "--weights", "none"])
        models = os.path.join(os.path.dirname(config), "labpose-models", "iteration-0")
        train_dir = os.path.join(models, os.listdir(models)[0], "train")
        set_pose_config(os.path.join(train_dir, "pose_cfg.yaml"), {
            "crop_size": f"[{a.size}, {a.size}]", "batch_size": a.batch, "display_iters": 1,
            "evaluate_iters": 0, "save_iters": 100000, "schedule": "iterations"})
        train = [labpose, "train", config, "--device", "cpu", "--max-iters", str(a.iterations)]
        run(train, env=dict(env, OMP_NUM_THREADS="2"))
        alone = images_per_second(train_dir, a.batch, a.skip)
        clear(train_dir)
        output = run([mpirun, "-np", "2", "--bind-to", "core"] + train, env=env)
        ranks = images_per_second(train_dir, a.batch, a.skip)
        clear(train_dir)
        found = re.search(r"gradient exchange: ([\d.]+) ms per step, ([\d.]+) ms of it waited for after "
                          r"backward \((\d+) % hidden", output)
        if found is None:
            sys.exit(f"error: no gradient exchange line in the ranks' output:\n{output[-3000:]}")
        exchange, waited, hidden = found.groups()
        set_pose_config(os.path.join(train_dir, "pose_cfg.yaml"), {"sync_batch_norm": "true"})
        run([mpirun, "-np", "2", "--bind-to", "core"] + train, env=env)
        synced = images_per_second(train_dir, a.batch, a.skip)
        clear(train_dir)
        set_pose_config(os.path.join(train_dir, "pose_cfg.yaml"), {"sync_batch_norm": "false"})
        print(f"{net:20s} {alone:12.2f} {ranks:11.2f} {ranks / alone:6.2f} {exchange + ' ms':>14s} "
              f"{waited + ' ms':>12s} {hidden + ' %':>7s} {synced:12.2f} {synced / alone:6.2f}",
              flush=True)
    print(f"images/s of {a.size}x{a.size} crops, global batch {a.batch}, steps {a.skip + 1}-{a.iterations}; "
          f"projects in {work}")


if __name__ == "__main__":
    main()

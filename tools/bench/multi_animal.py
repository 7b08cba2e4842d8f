#!/usr/bin/python3
"""Several animals on the synthetic ground truth: `labpose demo --animals N` (N mice that meet, touch
and pass each other; frames labeled from the known keypoints) trained for --minutes on this machine's
CPU, then evaluated on its held-out frames. It prints what issue 44 asks of the multi-animal
projects: the test error per bodypart (mean distance after matching predicted mice to labeled ones,
pixels), COCO's mAP and mAR over OKS 0.50:0.95 as DeepLabCut computes them, and the assembly's purity
(DeepLabCut's, per keypoint) with the share of predicted animals that are wholly one mouse; plus the
PAF graph evaluate chose. With --test-frames F, the demo also renders a tracking test video of F
frames (other paths, the same mice) with its ground truth; `labpose analyze` tracks it and
labpose-bench-tracks (beside --labpose) scores the tracks as issue 45 asks: MOTA, IDF1, identity
switches per 1000 frames, the share of frames where every animal is on its own track, the share of
analysis time that linking and stitching took, and the purity, mAP and mAR of every frame's assembled
animals (as for the held-out frames, over the whole video, beside what the truth's own keypoints
score); with --precisions, once per precision (`analyze
--precision`, each into its own folder), for the speed and the tracks of each.

    /usr/bin/python3 tools/bench/multi_animal.py --labpose build/tools/labpose --minutes 20 \
        [--test-frames 3000] [--precisions fp32,bf16]

The demo trains efficientnet_lite0 from its ImageNet weights when `labpose weights` has them cached
(`labpose weights fetch efficientnet_lite0`), else mobilenet_v2_0.35 from scratch; the output says
which. Run it on a quiet machine: training uses every core and the budget is wall time.
Only the standard library.
"""
import argparse
import csv
import glob
import os
import re
import subprocess
import sys
import tempfile
import time


def run_demo(args, work):
    command = [args.labpose, "demo", "--animals", str(args.animals), "--minutes", str(args.minutes),
               "--dir", work, "--seed", str(args.seed)]
    if args.labeled_frames:
        command += ["--labeled-frames", str(args.labeled_frames)]
    if args.frames:
        command += ["--frames", str(args.frames)]
    if args.test_frames:
        command += ["--test-frames", str(args.test_frames)]
    if args.identity:
        command += ["--identity"]
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout, done.stderr, seconds


def number(pattern, text):
    found = re.search(pattern, text)
    return float(found.group(1)) if found else float("nan")


def per_bodypart_errors(project):
    files = glob.glob(os.path.join(project, "labpose-evaluation-results", "**",
                                   "*-keypoint-results.csv"), recursive=True)
    if not files:
        return {}
    with open(sorted(files)[-1], newline="") as f:
        rows = list(csv.reader(f))
    names = rows[0][1:]
    return {row[0]: dict(zip(names, (float(value or "nan") for value in row[1:]))) for row in rows[1:]}


def score_tracking(args, config, project, precision):
    """Analyzes the test video in `precision` (into a folder of its own), then scores its tracks
    against the truth; prints both."""
    video = os.path.join(project, "videos", "test_mice.mp4")
    truth = os.path.join(project, "videos", "test_mice_truth.h5")
    dest = os.path.join(project, f"test-tracks-{precision}")
    start = time.monotonic()
    done = subprocess.run([args.labpose, "analyze", config, video, "--precision", precision,
                           "--dest", dest], capture_output=True, text=True)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"labpose analyze {video} failed:\n{done.stdout}\n{done.stderr}")
    tracks = [line for line in done.stdout.splitlines() if line.endswith(".h5")]
    tracking = re.search(r"tracking took ([0-9.]+) s", done.stderr)
    print(f"test video in {precision}: {args.test_frames} frames analyzed and tracked in {seconds:.0f} s "
          f"({args.test_frames / seconds:.1f} frames/s)"
          + (f"; linking and stitching {100 * float(tracking.group(1)) / seconds:.1f} % of it"
             if tracking else ""))
    scorer = os.path.join(os.path.dirname(os.path.abspath(args.labpose)), "labpose-bench-tracks")
    # The tracks, and every frame's assembled animals (purity and mAP over thousands of mice).
    assemblies = re.sub(r"_[a-z]{2}\.h5$", "_assemblies.pickle", tracks[-1])
    scored = subprocess.run([scorer, tracks[-1], truth, "--assemblies", assemblies],
                            capture_output=True, text=True)
    print(scored.stdout.strip() if scored.returncode == 0 else f"scoring failed: {scored.stderr}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labpose", default="labpose", help="the labpose program")
    parser.add_argument("--animals", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=20.0, help="training budget (wall time)")
    parser.add_argument("--seed", type=int, default=1, help="the synthetic scene's seed")
    parser.add_argument("--labeled-frames", type=int, help="the demo's default unless given")
    parser.add_argument("--frames", type=int, help="frames in the video (the demo's default)")
    parser.add_argument("--work", help="where the project goes (default: a new temporary folder)")
    parser.add_argument("--test-frames", type=int, help="also track a test video of this many frames")
    parser.add_argument("--identity", action="store_true",
                        help="mice of distinct shades and an identity head (demo --identity)")
    parser.add_argument("--precisions", default="fp32",
                        help="analyze the test video in each of these (default fp32), in turn")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="labpose-multi-animal-")
    os.makedirs(work, exist_ok=True)
    out, err, seconds = run_demo(args, work)
    config = out.splitlines()[0]
    project = os.path.dirname(config)
    trained = re.search(r"== train: (.*)", err)
    iterations = re.search(r"trained (\d+) iterations in ([0-9:]+)", err)
    print(f"labpose demo --animals {args.animals} --minutes {args.minutes:g} --seed {args.seed}"
          f"{' --identity' if args.identity else ''}: "
          f"{seconds / 60:.1f} min end to end")
    print(f"network: {trained.group(1) if trained else '?'}"
          + (f"; {iterations.group(1)} iterations in {iterations.group(2)}" if iterations else ""))
    for line in err.splitlines():
        if line.startswith("PAF graph of"):
            print(line)
    errors = per_bodypart_errors(project)
    test = errors.get("Test error (px)", {})
    train = errors.get("Train error (px)", {})
    if test:
        print("test error per bodypart (px, after matching): "
              + ", ".join(f"{name} {value:.2f}" for name, value in test.items()))
        print("train error per bodypart (px): "
              + ", ".join(f"{name} {value:.2f}" for name, value in train.items()))
    print(f"test error: {number(r'test error: ([0-9.]+|nan)', out):.2f} px")
    print(f"test mAP {number(r'mAP ([0-9.]+|nan)', out):.3f}, "
          f"mAR {number(r'mAR ([0-9.]+|nan)', out):.3f} (OKS 0.50:0.95)")
    print(f"test purity {number(r'purity ([0-9.]+|nan)', out):.3f}, "
          f"whole animals {number(r'whole animals ([0-9.]+|nan)', out):.3f}")
    if args.test_frames:
        for precision in args.precisions.split(","):
            score_tracking(args, config, project, precision)
    print(f"project: {project}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""bf16 and int8 against fp32 on a trained model of the real DeepLabCut project (openfield-Pranav-2018-10-30,
640x480): the test error in each precision, how far the keypoints move over the whole openfield video,
and end-to-end `labpose analyze` frames/s in each precision, in one run.

    /usr/bin/python3 tools/bench/precision_openfield.py --labpose build/tools/labpose --minutes 15
        [--data ../shared/data/openfield-Pranav-2018-10-30] [--work /tmp/precision-openfield]
        [--fraction 0.8] [--net efficientnet_lite0] [--batch 8] [--reuse]

It copies the project into --work, sets its TrainingFraction, runs `labpose create-dataset` (the default
network from its cached ImageNet weights: `labpose weights fetch efficientnet_lite0` once) and
`labpose train --max-minutes M` in fp32. Then, for each precision the CPU offers (`labpose doctor`):
`labpose evaluate --precision P` (test error in P and in fp32, keypoint shift on the labeled frames) and
`labpose analyze --precision P --against-fp32` on the video (every frame in P and again in fp32: the
keypoint shift over the whole video, and frames/s of both runs, read from the _meta.json). Last,
`labpose analyze --precision auto --against-fp32`: which precision auto took, why (its console line),
and the shift it gave over the whole video. --reuse keeps
a model trained by an earlier run in --work. Run it on a quiet machine: every step uses every core.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(os.path.dirname(ROOT), "shared", "data", "openfield-Pranav-2018-10-30")


def run(command, log):
    print("  $ " + " ".join(command), flush=True)
    with open(log, "w") as out:
        status = subprocess.call(command, stdout=out, stderr=subprocess.STDOUT)
    if status != 0:
        sys.exit(f"error: exit {status}, see {log}")
    return open(log).read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labpose", default=os.path.join(ROOT, "build", "tools", "labpose"))
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--work", default="/tmp/precision-openfield")
    ap.add_argument("--minutes", type=float, default=15.0)
    ap.add_argument("--fraction", type=float, default=0.8)
    ap.add_argument("--net", default="efficientnet_lite0")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--reuse", action="store_true", help="keep the model an earlier run trained")
    a = ap.parse_args()
    labpose = os.path.abspath(a.labpose)
    project = os.path.join(a.work, "openfield")
    config = os.path.join(project, "config.yaml")
    os.makedirs(a.work, exist_ok=True)

    if not (a.reuse and os.path.exists(config)):
        shutil.rmtree(project, ignore_errors=True)
        shutil.copytree(a.data, project, symlinks=True)
        text = open(config).read()
        text, count = re.subn(r"(?m)^TrainingFraction:\n(- .*\n)+", f"TrainingFraction:\n- {a.fraction}\n", text)
        if count != 1:
            sys.exit(f"error: {config}: no block-list TrainingFraction to change")
        open(config, "w").write(text)
        log = run([labpose, "create-dataset", config, "--net", a.net], os.path.join(a.work, "create-dataset.log"))
        if "ImageNet weights" in log and "from scratch" in log:
            print("  note: no cached ImageNet weights: the network trains from scratch", flush=True)
        # Trained in fp32 (training's default, auto, may take bf16): the inference precisions are
        # compared against an fp32-trained model.
        run([labpose, "train", config, "--max-minutes", str(a.minutes), "--precision", "fp32"],
            os.path.join(a.work, "train.log"))

    doctor = subprocess.check_output([labpose, "doctor"], text=True)
    fast = next((line.split(None, 2)[2] for line in doctor.splitlines()
                 if line.strip().startswith("CPU precisions")), "fp32")
    precisions = [p for p in fast.split(" (")[0].split(", ") if p != "fp32"]
    if not precisions:
        sys.exit("error: this CPU runs only fp32 fast (labpose doctor): nothing to compare")
    print(f"labpose doctor: CPU precisions {fast}", flush=True)

    video = glob.glob(os.path.join(project, "videos", "*.mp4"))[0]
    rows = []
    for precision in precisions:
        log = run([labpose, "evaluate", config, "--precision", precision],
                  os.path.join(a.work, f"evaluate-{precision}.log"))
        errors = re.search(rf"{precision} against fp32 \(([^)]*)\): test ([0-9.]+) px \(fp32 ([0-9.]+)\)", log)
        dest = os.path.join(a.work, f"analysis-{precision}")
        shutil.rmtree(dest, ignore_errors=True)
        run([labpose, "analyze", config, video, "--precision", precision, "--against-fp32",
             "--batch-size", str(a.batch), "--dest", dest], os.path.join(a.work, f"analyze-{precision}.log"))
        meta = json.load(open(glob.glob(os.path.join(dest, "*_meta.json"))[0]))
        against = meta["against_fp32"]
        rows.append({"precision": precision, "snapshot": errors.group(1),
                     "test_error": float(errors.group(2)), "fp32_test_error": float(errors.group(3)),
                     "frames": meta["frames"], **against})
        print("RESULT " + json.dumps(rows[-1]), flush=True)

    print("\n| precision | test error (fp32) | keypoints above pcutoff: median / 99th pct. shift | "
          "all keypoints: median / 99th pct. | analyze frames/s (fp32) | speed-up |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        c, al = r["confident"], r["all"]
        print(f"| {r['precision']} | {r['test_error']:.2f} px ({r['fp32_test_error']:.2f}) | "
              f"{c['median_px']:.3f} / {c['p99_px']:.3f} px ({c['keypoints']} keypoints) | "
              f"{al['median_px']:.3f} / {al['p99_px']:.3f} px ({al['keypoints']}) | "
              f"{r['frames_per_second']:.1f} ({r['fp32_frames_per_second']:.1f}) | "
              f"{r['frames_per_second'] / r['fp32_frames_per_second']:.2f}x |")
    auto = analyze_auto(a, config, video)
    print(f"\n--precision auto took {auto['took']}: median / 99th pct. shift of the keypoints above "
          f"pcutoff {auto['confident']['median_px']:.3f} / {auto['confident']['p99_px']:.3f} px "
          f"({auto['confident']['keypoints']} keypoints), {auto['frames_per_second']:.1f} frames/s "
          f"(fp32 {auto['fp32_frames_per_second']:.1f})\n  {auto['reason']}")
    print(f"\n{a.net}, {a.minutes:g} minutes of fp32 training on {int(100 * a.fraction)}/"
          f"{100 - int(100 * a.fraction)}, snapshot {rows[0]['snapshot']}; the video: {rows[0]['frames']} "
          f"frames, batch {a.batch}")


def analyze_auto(a, config, video):
    """`analyze --precision auto --against-fp32`: what auto took, its reason and the shift."""
    dest = os.path.join(a.work, "analysis-auto")
    shutil.rmtree(dest, ignore_errors=True)
    log = run([os.path.abspath(a.labpose), "analyze", config, video, "--precision", "auto", "--against-fp32",
               "--batch-size", str(a.batch), "--dest", dest], os.path.join(a.work, "analyze-auto.log"))
    # The last line is the CPU's choice: int8 (or why not) after the device's bf16 or fp32.
    reason = [line.strip() for line in log.splitlines() if "--precision auto:" in line][-1:]
    reason = reason[0] if reason else ""
    meta = json.load(open(glob.glob(os.path.join(dest, "*_meta.json"))[0]))
    result = {"took": meta["against_fp32"]["precision"], "reason": reason, **meta["against_fp32"]}
    print("RESULT " + json.dumps(result), flush=True)
    return result


if __name__ == "__main__":
    main()

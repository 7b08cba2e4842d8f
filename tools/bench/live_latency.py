#!/usr/bin/python3
"""Batch-1 latency of `labpose live` and of ONNX Runtime on the same exported models, in one run.

For each network (mobilenet_v2_0.35, resnet_50, efficientnet_lite0): a demo project whose shuffle is
trained for one iteration (latency does not depend on the weights), exported with --onnx; then, for
each frame size (640x480, 320x240), a synthetic clip is run through `labpose live --video` (every
frame, the plan built once, latency from decoded frame to pose) and through onnxruntime's
InferenceSession.run on the same decoded frames one at a time (the model.onnx of the export: uint8
frames in, score maps and locref out, plus the in-graph decoding). Prints a table of p50 / p99 in
milliseconds and frames/s.

ONNX Runtime comes from PyPI into a virtualenv (--venv, made once and reused); labpose's own Python
package (build/python) decodes the frames for it.

Usage: tools/bench/live_latency.py [--build build] [--frames 200] [--work DIR] [--venv DIR]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

NETS = ["mobilenet_v2_0.35", "resnet_50", "efficientnet_lite0"]
SIZES = [(640, 480), (320, 240)]

ONNX_TIMER = r"""
import json, sys, time
import numpy, onnxruntime
import labpose
model, video, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
options = onnxruntime.SessionOptions()
options.intra_op_num_threads = threads
session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
frames = labpose.read_frames(video)
session.run(None, {"frames": frames[:1]})  # the first run prepares the session
latencies = []
started = time.perf_counter()
for frame in frames:
    before = time.perf_counter()
    session.run(None, {"frames": frame[None]})
    latencies.append(time.perf_counter() - before)
elapsed = time.perf_counter() - started
latencies.sort()
quantile = lambda q: latencies[min(len(latencies) - 1, max(0, int(-(-q * len(latencies) // 1)) - 1))]
print(json.dumps({"p50": quantile(0.5) * 1e3, "p99": quantile(0.99) * 1e3,
                  "fps": len(frames) / elapsed, "version": onnxruntime.__version__}))
"""


def run(command, **kwargs):
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True,
                            **kwargs)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, command))}\n{result.stdout}{result.stderr}")
    return result.stdout + result.stderr


def ensure_venv(venv):
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        run(["/usr/bin/python3", "-m", "venv", venv])
        run([python, "-m", "pip", "install", "--quiet", "onnxruntime", "numpy"])
    return python


def exported_model(labpose, work, net):
    """A demo project with `net` trained one iteration and exported with ONNX; its folder."""
    folder = os.path.join(work, net)
    if os.path.exists(os.path.join(folder, "model.onnx")):
        return folder
    project = os.path.join(work, "p-" + net)
    os.makedirs(project, exist_ok=True)
    config = run([labpose, "--quiet", "demo", "--project-only", "--dir", project, "--frames", 30,
                  "--labeled-frames", 10]).strip().splitlines()[0]
    run([labpose, "--quiet", "create-dataset", config, "--net", net, "--weights", "none"])
    run([labpose, "--quiet", "train", config, "--max-iters", 1, "--batch-size", 1])
    run([labpose, "--quiet", "export", config, "--onnx", "--dest", work])
    produced = [name for name in os.listdir(work) if name.startswith("DLC_") and f"_{net}_" in name]
    os.rename(os.path.join(work, produced[0]), folder)
    return folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--work", default=None, help="keep the models here (default: a temp dir)")
    parser.add_argument("--venv", default="build/bench-venv-onnxruntime")
    args = parser.parse_args()
    labpose = os.path.abspath(os.path.join(args.build, "tools", "labpose"))
    make_clip = os.path.abspath(os.path.join(args.build, "tools", "labpose-make-clip"))
    python = ensure_venv(os.path.abspath(args.venv))
    work = args.work or tempfile.mkdtemp(prefix="labpose-latency-")
    os.makedirs(work, exist_ok=True)
    environment = dict(os.environ, PYTHONPATH=os.path.abspath(os.path.join(args.build, "python")))
    threads = os.cpu_count()
    clips = {}
    for width, height in SIZES:
        clip = os.path.join(work, f"clip-{width}x{height}.mp4")
        if not os.path.exists(clip):
            run([make_clip, clip, "--frames", args.frames, "--size", f"{width}x{height}"])
        clips[(width, height)] = clip
    # bf16 where this CPU has bf16 units (labpose live --precision auto picks it then).
    doctor = [line for line in run([labpose, "doctor"]).splitlines() if "CPU precisions" in line]
    bf16 = bool(doctor) and "bf16" in doctor[0]
    print(f"batch-1 latency, {args.frames} frames per clip, {threads} cores")
    print("| net | size | labpose fp32 p50 / p99 (ms) | frames/s |"
          + (" labpose bf16 p50 / p99 (ms) | frames/s |" if bf16 else "")
          + " ONNX Runtime fp32 p50 / p99 (ms) | frames/s |")
    print("|---|---|---|---|" + ("---|---|" if bf16 else "") + "---|---|")
    pattern = re.compile(r"live: (\d+) frames, latency p50 ([\d.]+) ms, p95 ([\d.]+) ms, "
                         r"p99 ([\d.]+) ms, ([\d.]+) frames/s")
    version = ""
    for net in NETS:
        folder = exported_model(labpose, work, net)
        for size, clip in clips.items():
            cells = []
            for precision in ["fp32", "bf16"] if bf16 else ["fp32"]:
                output = run([labpose, "live", "--model", folder, "--video", clip,
                              "--report-every", 0, "--precision", precision])
                match = pattern.findall(output)[-1]
                cells.append(f"{float(match[1]):.1f} / {float(match[3]):.1f} | "
                             f"{float(match[4]):.1f}")
            onnx = json.loads(run([python, "-c", ONNX_TIMER, os.path.join(folder, "model.onnx"),
                                   clip, threads], env=environment).strip().splitlines()[-1])
            version = onnx["version"]
            print(f"| {net} | {size[0]}×{size[1]} | {' | '.join(cells)} | "
                  f"{onnx['p50']:.1f} / {onnx['p99']:.1f} | {onnx['fps']:.1f} |", flush=True)
    print(f"ONNX Runtime {version}, CPUExecutionProvider, {threads} intra-op threads; "
          f"models in {work}")


if __name__ == "__main__":
    main()

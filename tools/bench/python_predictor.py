#!/usr/bin/python3
"""What the Python bindings cost: labpose.Predictor.predict frames/s against `labpose bench` for the
same network, frame size, batch and bodyparts, alternated in one run (bench times the network's plan
alone; predict adds the copy of the frames, the peaks and the arrays), and the time of a first
`import labpose` in a new interpreter.

    PYTHONPATH=build/python /usr/bin/python3 tools/bench/python_predictor.py CONFIG [--size 640x480]
        [--batch 8] [--rounds 3]

CONFIG: a project with a trained shuffle (e.g. the demo's). Run it on a quiet machine."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy

import labpose

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("--shuffle", type=int, default=1)
    ap.add_argument("--labpose", default=os.path.join(ROOT, "build", "tools", "labpose"))
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    width, height = map(int, a.size.split("x"))
    predictor = labpose.Predictor(a.config, shuffle=a.shuffle, device=a.device, batch_size=a.batch)
    arch = predictor.net_type
    frames = numpy.random.default_rng(0).integers(0, 256, (a.batch, height, width, 3), numpy.uint8)
    joints = len(predictor.bodyparts)
    print(f"{arch} (scorer {predictor.scorer}), {a.size}, batch {a.batch}, {joints} bodyparts, "
          f"{predictor.device}")
    predictor.predict(frames)
    predictor.predict(frames)
    python_fps, bench_fps = [], []
    for _ in range(a.rounds):
        times = []
        for _ in range(a.repeats):
            start = time.perf_counter()
            predictor.predict(frames)
            times.append(time.perf_counter() - start)
        python_fps.append(a.batch / statistics.median(times))
        done = subprocess.run([a.labpose, "bench", "--arch", arch, "--size", a.size, "--batch",
                               str(a.batch), "--bodyparts", str(joints), "--device", a.device,
                               "--repeats", str(a.repeats), "--json"],
                              capture_output=True, text=True, check=True)
        bench_fps.append(json.loads(done.stdout.strip().splitlines()[-1])["fps"])
        print(f"  Predictor.predict {python_fps[-1]:.2f} frames/s, labpose bench {bench_fps[-1]:.2f} "
              f"frames/s", flush=True)
    ratio = statistics.median(python_fps) / statistics.median(bench_fps)
    print(f"median: Predictor.predict {statistics.median(python_fps):.2f}, bench "
          f"{statistics.median(bench_fps):.2f} frames/s: {ratio:.3f}x ({100 * (1 - ratio):+.1f} % "
          f"cost)")
    imports = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import labpose"], check=True)
        imports.append(time.perf_counter() - start)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare = time.perf_counter() - start
    print(f"import labpose in a new interpreter: {statistics.median(imports):.3f} s median of 5 "
          f"(the interpreter alone {bare:.3f} s)")


if __name__ == "__main__":
    main()

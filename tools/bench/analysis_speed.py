#!/usr/bin/python3
"""End-to-end `labpose analyze` frames/s against `labpose bench` inference frames/s, in one run, for
the same network, frame size, batch and device (issue target: analyze >= 0.9x bench).

    /usr/bin/python3 tools/bench/analysis_speed.py CONFIG VIDEO [--batch 8] [--device cpu]
        [--labpose build/tools/labpose] [--shuffle 1] [--training-fraction F]

CONFIG is a project whose shuffle has a trained snapshot (e.g. one made by tools/bench/openfield.py);
VIDEO is analyzed into a temporary folder (--overwrite), its _meta.json gives the frames/s of the whole
run (decoding, network, peaks, writing, plan compilation included). The bench runs the same network
at the video's frame size (read from the _meta.json).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("video")
    ap.add_argument("--labpose", default=os.path.join(ROOT, "build", "tools", "labpose"))
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--shuffle", default="1")
    ap.add_argument("--training-fraction")
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as dest:
        command = [a.labpose, "--quiet", "analyze", a.config, a.video, "--batch-size", str(a.batch),
                   "--device", a.device, "--shuffle", a.shuffle, "--dest", dest, "--overwrite"]
        if a.training_fraction:
            command += ["--training-fraction", a.training_fraction]
        print("$ " + " ".join(command), flush=True)
        subprocess.check_call(command)
        metas = glob.glob(os.path.join(dest, "*_meta.json"))
        if len(metas) != 1:
            sys.exit(f"error: expected one _meta.json in {dest}, found {metas}")
        meta = json.load(open(metas[0]))
    crop = meta.get("crop")
    width = crop[1] - crop[0] if crop else meta["width"]
    height = crop[3] - crop[2] if crop else meta["height"]
    bench = [a.labpose, "--quiet", "bench", "--arch", meta["net_type"], "--size", f"{width}x{height}",
             "--batch", str(a.batch), "--device", a.device, "--json"]
    print("$ " + " ".join(bench), flush=True)
    bench_fps = json.loads(subprocess.check_output(bench, text=True).strip().splitlines()[-1])["fps"]
    analyze_fps = meta["frames_per_second"]
    print(f"{meta['net_type']} {width}x{height} batch {a.batch} on {meta['device']}: "
          f"analyze {analyze_fps:.1f} frames/s ({meta['frames']} frames in {meta['seconds']:.1f} s), "
          f"bench {bench_fps:.1f} frames/s, ratio {analyze_fps / bench_fps:.2f}")


if __name__ == "__main__":
    main()

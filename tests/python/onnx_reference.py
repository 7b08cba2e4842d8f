#!/usr/bin/python3
"""Runs an ONNX model written by labpose (nets/onnx) with onnxruntime from PyPI, for
tests/nets/onnx_export_test.cpp.

Makes (once) and reuses a virtualenv at --venv (test_venv.py) with onnxruntime installed by pip. For each --run NAME=FRAMES.npy (a float32 (N, H, W, 3)
array of whole numbers 0-255: the frames, converted here to the model's uint8 input "frames"), writes
NAME_<output>.npy into --out for every output of the model (scoremap, locref, pose, ...), as float32.
With --expect-invalid FILE, also checks that onnxruntime refuses to load FILE (a damaged model) and
fails when it loads.

Exit status 77: onnxruntime could not be installed (no PyPI); the message says why.
Usage: onnx_reference.py --venv DIR --model M.onnx --run small=frames.npy [--run ...] --out DIR
"""
import argparse
import os
import subprocess
import sys

from test_venv import ensure_venv


def run_in_venv(args):
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    for run in args.run:
        name, frames_file = run.split("=", 1)
        frames = np.load(frames_file)
        if frames.ndim != 4 or frames.shape[3] != 3 or np.any(frames != np.round(frames)) or \
                frames.min() < 0 or frames.max() > 255:
            sys.exit(f"{frames_file}: expected (N, H, W, 3) whole numbers 0-255, found {frames.shape}")
        outputs = session.run(None, {"frames": frames.astype(np.uint8)})
        for output, value in zip(names, outputs):
            np.save(os.path.join(args.out, f"{name}_{output}.npy"), value.astype(np.float32))
    print(f"onnxruntime {ort.__version__}: ran {len(args.run)} batches, outputs {', '.join(names)}")
    if args.expect_invalid:
        try:
            ort.InferenceSession(args.expect_invalid, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime raises its own exception types
            print(f"onnxruntime refuses {os.path.basename(args.expect_invalid)}: {error}")
        else:
            sys.exit(f"onnxruntime loaded the damaged model {args.expect_invalid}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--run", action="append", default=[], help="NAME=FRAMES.npy")
    parser.add_argument("--out", required=True)
    parser.add_argument("--expect-invalid", help="a damaged model onnxruntime must refuse")
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.in_venv:
        run_in_venv(args)
        return
    python = ensure_venv(args.venv, ["numpy", "onnxruntime"], ["onnxruntime"])
    sys.exit(subprocess.run([python, os.path.abspath(__file__), "--in-venv"] + sys.argv[1:]).returncode)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""labpose on a GPU, checked and timed beside PyTorch eager on the same GPU, in one run and one table
(tools/gpu-check.sh runs it).

1. The GPU tests: cuda_gpu_tests and the cuda instantiations of nets_tests (from --test-dir).
2. `labpose bench --device cuda`: inference frames/s at 640x480 and training images/s at the sizes
   the issue tracker's targets name, in each precision; and analysis's whole path (`--pipeline`:
   8-bit frames up, peaks down, with 1 slot and with analyze's default of 3), on synthetic frames
   and, with --video (default: the pack's videos/long.mp4 beside the test programs), on a real
   video's frames, decoding included, beside decoding alone; and again with NVDEC decoding it
   (`--decode gpu`).
3. PyTorch eager on the same networks (tools/torch_reference.py's PoseNet: the same layers, dilations
   and head as labpose), with cudnn.benchmark and channels_last, where python3 has torch: TF32 (its
   default for convolutions), strict fp32, fp16 and AMP bf16. Ratios compare like with like: labpose
   tf32 with PyTorch TF32, fp32 with strict fp32, bf16 training with AMP bf16.

Without a usable GPU it says so and exits 0. --device cpu --quick runs the same flow on the CPU at
small sizes (how the test suite checks this script).

Usage: gpu_check.py [--labpose build/tools/labpose] [--test-dir build/tests] [--quick]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (architecture, size, batches, precisions): inference at 640x480.
INFERENCE = [("resnet_50", "640x480", (1, 64), ("tf32", "fp32", "fp16", "bf16")),
             ("mobilenet_v2_0.35", "640x480", (1, 64), ("fp32", "fp16")),
             ("efficientnet_lite0", "640x480", (1, 64), ("fp32", "fp16"))]
# (architecture, size, batch, precisions): training steps.
TRAINING = [("resnet_50", "400x400", 8, ("tf32", "fp32", "bf16")),
            ("efficientnet_lite0", "256x256", 8, ("tf32", "fp32", "bf16")),
            ("mobilenet_v2_0.35", "192x192", 8, ("tf32", "fp32", "bf16"))]
# (architecture, size, batch, precision, slots): analysis's path, `labpose bench --pipeline`.
PIPELINE = [("resnet_50", "640x480", 64, "fp16", 1), ("resnet_50", "640x480", 64, "fp16", 3),
            ("efficientnet_lite0", "640x480", 64, "fp16", 3),
            ("mobilenet_v2_0.35", "640x480", 64, "fp32", 3)]
# (architecture, batch, precision): analysis's path on --video's frames, decoding included, 3 slots.
VIDEO_PIPELINE = [("resnet_50", 64, "fp16"), ("efficientnet_lite0", 64, "fp16"),
                  ("mobilenet_v2_0.35", 64, "fp32")]
# Batch-1 inference op by op (LABPOSE_CUDA_GRAPHS=0), beside the rows above that run as CUDA graphs.
OP_BY_OP = [("resnet_50", "640x480", 1, "fp16"), ("mobilenet_v2_0.35", "640x480", 1, "fp32")]
# The same on frames NVDEC decodes (`--decode gpu`), where the video's codec allows.
NVDEC_PIPELINE = [("resnet_50", 64, "fp16"), ("efficientnet_lite0", 64, "fp16")]
# labpose's precision -> PyTorch's mode of the same class.
PEER_MODE = {"tf32": "tf32", "fp32": "fp32-strict", "fp16": "fp16", "bf16": "bf16"}


def run(command, timeout, environment=None):
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env=None if environment is None else {**os.environ, **environment})
        return done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout} s"
    except OSError as error:
        return 127, str(error)


def gpu_problem(labpose, device):
    """Why `device` cannot run labpose's bench here, or None."""
    code, output = run([labpose, "bench", "--device", device, "--arch", "mobilenet_v2_0.35", "--size",
                        "64x64", "--repeats", "1", "--warmup", "0", "--json"], 120)
    if code == 0:
        return None
    lines = [line for line in output.splitlines() if line.startswith(("error:", "hint:"))]
    return " ".join(lines) or output.strip()[-300:]


def gtest(binary, arguments, timeout):
    """'N passed, M failed' of a gtest binary, and the names of the failed tests."""
    if not os.access(binary, os.X_OK):
        return f"not found: {binary}", []
    code, output = run([binary, "--gtest_brief=1"] + arguments, timeout)
    passed = re.search(r"\[  PASSED  \] (\d+) test", output)
    failed = sorted(set(re.findall(r"^\[  FAILED  \] (\S+\.\S+)", output, re.M)))
    skipped = re.search(r"\[  SKIPPED \] (\d+) test", output)
    summary = f"{passed.group(1) if passed else 0} passed, {len(failed)} failed"
    if skipped:
        summary += f", {skipped.group(1)} skipped"
    if code == 124:
        summary += " (timed out)"
    elif code != 0 and not failed:
        summary += f" (exit {code}: {output.strip().splitlines()[-1] if output.strip() else ''})"
    return summary, failed


def labpose_bench(labpose, device, arch, size, batch, precision, mode, quick):
    """mode: "infer", "infer-op-by-op" (without CUDA graphs), "train", "pipeline:<slots>",
    "video:<slots>" (size is then the video), or "nvdec:<slots>" (the video decoded with NVDEC)."""
    command = [labpose, "bench", "--device", device, "--arch", arch, "--size", size, "--batch",
               str(batch), "--precision", precision, "--json", "--repeats", "3" if quick else "10",
               "--warmup", "1" if quick else "3"]
    if mode == "train":
        command.append("--train")
    elif mode.startswith("pipeline:"):
        command += ["--pipeline", "--slots", mode.split(":")[1]]
    elif mode.startswith(("video:", "nvdec:")):
        command = [labpose, "bench", "--device", device, "--arch", arch, "--batch", str(batch), "--precision",
                   precision, "--json", "--pipeline", "--slots", mode.split(":")[1], "--video", size]
        if mode.startswith("nvdec:"):
            command += ["--decode", "gpu"]
    code, output = run(command, 300, {"LABPOSE_CUDA_GRAPHS": "0"} if mode == "infer-op-by-op" else None)
    lines = [line for line in output.splitlines() if line.startswith("{")]
    if code != 0 or not lines:
        error = [line for line in output.splitlines() if line.startswith("error:")]
        return None, (error[-1] if error else output.strip()[-200:])
    result = json.loads(lines[-1])
    return result, None


# ---- PyTorch eager, in this process (after labpose's runs, so they never share the GPU) ----------
def torch_peer(device, quick):
    """A function (arch, size, batch, mode, train) -> frames or images per second, or a reason."""
    try:
        import torch
    except ImportError:
        return None, "python3 has no torch"
    if device == "cuda" and not torch.cuda.is_available():
        return None, "torch sees no GPU"
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    try:
        from torch_reference import PoseNet
    except ImportError as error:
        return None, f"tools/torch_reference.py does not load: {error}"
    torch.backends.cudnn.benchmark = True
    repeats = 3 if quick else 10

    def timed(step):
        for _ in range(2 if quick else 5):
            step()
        times = []
        for _ in range(repeats):
            if device == "cuda":
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                step()
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end) / 1e3)
            else:
                start = time.perf_counter()
                step()
                times.append(time.perf_counter() - start)
        return statistics.median(times)

    def measure(arch, size, batch, mode, train):
        width, height = (int(v) for v in size.split("x"))
        torch.backends.cudnn.allow_tf32 = mode == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        model = PoseNet(arch, 4).to(device).to(memory_format=torch.channels_last)
        x = (255.0 * torch.rand(batch, 3, height, width, device=device)).to(
            memory_format=torch.channels_last)
        if not train:
            model.eval()
            if mode == "fp16":
                model, x = model.half(), x.half()
            if mode == "bf16":
                model, x = model.to(torch.bfloat16), x.to(torch.bfloat16)
            with torch.inference_mode():
                return batch / timed(lambda: model(x))
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)

        def step():
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device, dtype=torch.bfloat16, enabled=mode == "bf16"):
                score, locref = model(x)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                score.float(), torch.zeros_like(score, dtype=torch.float)) + (locref.float() ** 2).mean()
            loss.backward()
            optimizer.step()
        return batch / timed(step)

    return measure, None


def rows_to_run(quick, video):
    """(arch, size, batch, precision, mode) in the table's order; mode as labpose_bench takes it."""
    if quick:
        rows = [("mobilenet_v2_0.35", "96x64", 2, "fp32", "infer"), ("mobilenet_v2_0.35", "96x64", 2, "tf32", "infer"),
                ("mobilenet_v2_0.35", "96x64", 1, "fp32", "infer-op-by-op"),
                ("mobilenet_v2_0.35", "64x64", 2, "fp32", "train"),
                ("mobilenet_v2_0.35", "96x64", 2, "fp32", "pipeline:2")]
        return rows + ([("mobilenet_v2_0.35", video, 4, "fp32", "video:1")] if video else [])
    rows = []
    for arch, size, batches, precisions in INFERENCE:
        rows += [(arch, size, batch, precision, "infer") for precision in precisions for batch in batches]
    rows += [(arch, size, batch, precision, "infer-op-by-op") for arch, size, batch, precision in OP_BY_OP]
    for arch, size, batch, precisions in TRAINING:
        rows += [(arch, size, batch, precision, "train") for precision in precisions]
    rows += [(arch, size, batch, precision, f"pipeline:{slots}") for arch, size, batch, precision, slots in PIPELINE]
    if video:
        rows += [(arch, video, batch, precision, "video:3") for arch, batch, precision in VIDEO_PIPELINE]
        rows += [(arch, video, batch, precision, "nvdec:3") for arch, batch, precision in NVDEC_PIPELINE]
    return rows


def work_name(arch, size, batch, mode):
    if mode.startswith(("video:", "nvdec:")):
        slots = mode.split(":")[1]
        decoder = ", NVDEC" if mode.startswith("nvdec:") else ""
        return (f"{arch} b{batch} analysis path on {os.path.basename(size)}{decoder}, "
                f"{slots} slot{'' if slots == '1' else 's'}")
    if mode.startswith("pipeline:"):
        slots = mode.split(":")[1]
        return f"{arch} {size} b{batch} analysis path, {slots} slot{'' if slots == '1' else 's'}"
    if mode == "infer-op-by-op":
        return f"{arch} {size} b{batch} inference, op by op (no CUDA graphs)"
    return f"{arch} {size} b{batch} {'training' if mode == 'train' else 'inference'}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labpose", default=os.path.join(ROOT, "build", "tools", "labpose"))
    parser.add_argument("--test-dir", default=os.path.join(ROOT, "build", "tests"))
    parser.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu to check this script")
    parser.add_argument("--quick", action="store_true", help="one small network, few repeats")
    parser.add_argument("--skip-tests", action="store_true", help="the timings only")
    parser.add_argument("--video", help="a video for the analysis path with decoding (default: videos/long.mp4 "
                        "in --test-dir, where the GPU pack puts it; none: skip those rows)")
    parser.add_argument("--budget-seconds", type=float, default=280,
                        help="rows not started by then are listed as skipped (default 280)")
    args = parser.parse_args()
    deadline = time.monotonic() + args.budget_seconds

    problem = gpu_problem(args.labpose, args.device)
    if problem is not None:
        print(f"gpu-check: no usable GPU for {args.labpose} --device {args.device}: {problem}")
        print("gpu-check: nothing to check here (run it on a machine with an NVIDIA GPU)")
        return 0

    print(f"gpu-check: labpose {args.labpose} on --device {args.device}", flush=True)
    if not args.skip_tests:
        for name, binary, arguments, timeout in (
                ("cuda_gpu_tests", "cuda_gpu_tests", [], 600),
                ("nets_tests (cuda)", "nets_tests", ["--gtest_filter=*/cuda"], 900)):
            if args.device == "cpu":
                continue
            summary, failed = gtest(os.path.join(args.test_dir, binary), arguments, timeout)
            print(f"tests {name}: {summary}", flush=True)
            for test in failed:
                print(f"  FAILED {test}")

    video = args.video if args.video is not None else os.path.join(args.test_dir, "videos", "long.mp4")
    rows = rows_to_run(args.quick, video if video and os.path.exists(video) else None)
    results = []
    description = ""
    for arch, size, batch, precision, mode in rows:
        if time.monotonic() > deadline:
            results.append((None, "skipped: past --budget-seconds"))
            continue
        result, error = labpose_bench(args.labpose, args.device, arch, size, batch, precision, mode, args.quick)
        if result is not None:
            description = description or result["backend"]
        results.append((result, error))
        print(f"  labpose {work_name(arch, size, batch, mode)} {precision}: "
              f"{result['fps']:.1f}/s ({result['precision']})" if result else f"  labpose ... {error}", flush=True)

    measure, why_no_peer = torch_peer("cuda" if args.device.startswith("cuda") else "cpu", args.quick)
    peers = []
    for arch, size, batch, precision, mode in rows:
        # The analysis path has no PyTorch twin here: its row stands beside labpose's plan alone.
        if (measure is None or time.monotonic() > deadline or mode == "infer-op-by-op"
                or mode.startswith(("pipeline:", "video:", "nvdec:"))):
            peers.append(None)
            continue
        try:
            peers.append(measure(arch, size, batch, PEER_MODE[precision], mode == "train"))
        except Exception as error:  # a mode this GPU or this torch lacks: a blank cell, not a stop
            print(f"  PyTorch {arch} {precision}: {type(error).__name__}: {error}")
            peers.append(None)

    print()
    print(f"labpose on {description}" if description else "labpose")
    if why_no_peer:
        print(f"PyTorch: {why_no_peer}")
    header = f"| work | precision | labpose | PyTorch eager ({'same class' if measure else 'none'}) | labpose / PyTorch |"
    print(header)
    print("|---|---|---|---|---|")
    for (arch, size, batch, precision, mode), (result, error), peer in zip(rows, results, peers):
        work = work_name(arch, size, batch, mode)
        unit = "images/s" if mode == "train" else "frames/s"
        if result is None:
            said = error if error.startswith("skipped") else f"failed: {error[:80]}"
            print(f"| {work} | {precision} | {said} | | |")
            continue
        ran = result["precision"]
        # A ratio only between like arithmetic: labpose's precision as it really ran.
        same = PEER_MODE.get(ran) == PEER_MODE[precision]
        ours = f"{result['fps']:.1f} {unit}"
        if result.get("decode_fps"):
            ours += f" ({100 * result['fps'] / result['decode_fps']:.0f} % of decoding alone, {result['decode_fps']:.0f})"
        if mode.startswith("nvdec:") and result.get("decoding") != "nvdec":
            ours += " (NVDEC unavailable: decoded on the CPU)"
        theirs = f"{peer:.1f}" if peer else ""
        ratio = f"{result['fps'] / peer:.2f}" if peer and same else ("" if peer is None else "not alike")
        shown = precision if ran == precision else f"{precision} (ran {ran})"
        print(f"| {work} | {shown} | {ours} | {theirs} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

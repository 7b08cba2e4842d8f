#!/usr/bin/python3
"""labpose against PyTorch on this machine, in one run: the same networks, sizes and batches through
`labpose bench` and ../shared/bench/torch_peer.py (eager PyTorch, and TorchScript for inference),
interleaved so both see the same machine. Prints a table of frames/s (images/s for training),
the ratios, and labpose's GFLOP/s as a fraction of the machine's peak.

Usage: compare_with_pytorch.py [--labpose build/tools/labpose] [--peer ../shared/bench/torch_peer.py]
                               [--quick] [--peak-gflops 196] [--only resnet_50:infer:1,...]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER_NAMES = {"resnet_50": "resnet50", "mobilenet_v2_1.0": "mnv2_100", "mobilenet_v2_0.35": "mnv2_035"}
CONFIGS = [("resnet_50", "infer", 1), ("resnet_50", "infer", 8), ("mobilenet_v2_1.0", "infer", 1),
           ("mobilenet_v2_1.0", "infer", 8), ("mobilenet_v2_0.35", "infer", 1), ("resnet_50", "train", 8),
           ("mobilenet_v2_0.35", "train", 8)]


def labpose(binary, arch, mode, batch, quick):
    size = "640x480" if mode == "infer" else "400x400"
    command = [binary, "bench", "--arch", arch, "--size", size, "--batch", str(batch), "--json",
               "--repeats", "3" if quick or mode == "train" else "7", "--warmup", "1"]
    if mode == "train":
        command.append("--train")
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def peer(script, arch, mode, batch, variant, quick):
    config = {"net": PEER_NAMES[arch], "mode": mode, "batch": batch, "variant": variant, "quick": quick}
    output = subprocess.run(["/usr/bin/python3", script, "--one", json.dumps(config)], check=True,
                            capture_output=True, text=True).stdout
    line = [line for line in output.splitlines() if line.startswith("RESULT ")][-1]
    result = json.loads(line[len("RESULT "):])
    return result.get("fps", result.get("images_per_s"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labpose", default=os.path.join(ROOT, "build", "tools", "labpose"))
    parser.add_argument("--peer", default=os.path.join(ROOT, "..", "shared", "bench", "torch_peer.py"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--peak-gflops", type=float, default=196.0)
    parser.add_argument("--only", help="comma-separated arch:mode:batch entries")
    args = parser.parse_args()
    configs = CONFIGS
    if args.only:
        configs = [(a, m, int(b)) for a, m, b in (entry.split(":") for entry in args.only.split(","))]
    rows = []
    for arch, mode, batch in configs:
        ours = labpose(args.labpose, arch, mode, batch, args.quick)
        eager = peer(args.peer, arch, mode, batch, "eager", args.quick)
        jit = peer(args.peer, arch, mode, batch, "jit", args.quick) if mode == "infer" else None
        rows.append((arch, mode, batch, ours, eager, jit))
        jit_text = f"{jit:8.2f} ({ours['fps'] / jit:4.2f}x)" if jit else "       -       "
        print(f"{arch:18} {mode:5} b{batch:<2} labpose {ours['fps']:8.2f}  PyTorch eager {eager:8.2f} "
              f"({ours['fps'] / eager:4.2f}x)  TorchScript {jit_text}  {ours['gflops']:6.1f} GFLOP/s "
              f"= {100 * ours['gflops'] / args.peak_gflops:4.1f}% of {args.peak_gflops:.0f}", flush=True)
    json.dump([{"arch": a, "mode": m, "batch": b, "labpose": o, "pytorch_eager_fps": e, "torchscript_fps": j}
               for a, m, b, o, e, j in rows], sys.stderr)


if __name__ == "__main__":
    main()

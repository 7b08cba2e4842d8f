#!/usr/bin/python3
"""labpose built against two oneDNN versions, on the same cases in one run: which build is faster,
precision by precision, and which kernels each ran.

    /usr/bin/python3 tools/bench/onednn_builds.py --a build/tools/labpose \
        --b build-onednn3/tools/labpose [--nets resnet_50,mobilenet_v2_0.35,efficientnet_lite0]
        [--batches 1,8] [--size 640x480] [--precisions fp32,bf16,int8] [--rounds 3] [--seconds 6]
        [--train efficientnet_lite0:256x256:8] [--json FILE]

The two binaries are the default build (Debian's oneDNN 2.6) and one configured with
-DLABPOSE_ONEDNN_PREFIX (tools/install-onednn.sh: oneDNN 3.2 from PyPI). Each case is measured
--rounds times, the builds alternating and the order turning from round to round, so that a burst of
load on a shared machine falls on both alike; the medians and the ratio b/a are printed. A precision
the CPU lacks (bf16 without bf16 units, int8 without VNNI) is left out with the reason. The kernels
are oneDNN's implementations of the convolutions in one run of each plan (ONEDNN_VERBOSE=1), as
tools/bench/precision_peers.py reports them; labpose's own Winograd 3x3 layers do not appear there.
--train adds training steps (`bench --train`) of NET at WxH, batch B, in fp32 and bf16.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import precision_peers  # noqa: E402  (labpose_kernels: oneDNN's verbose lines of one run)


def bench(binary, arguments, seconds):
    """frames/s (or images/s) of `labpose bench`, with repeats covering about `seconds`; None and
    the reason when the build refuses the case."""
    base = [binary, "--quiet", "bench", *arguments, "--json"]
    probe = subprocess.run(base + ["--repeats", "1", "--warmup", "1"], text=True,
                           capture_output=True)
    if probe.returncode != 0:
        return None, (probe.stderr.strip().splitlines() or ["failed"])[0]
    median = json.loads(probe.stdout.strip().splitlines()[-1])["median_s"]
    repeats = max(3, int(seconds / max(median, 1e-3)))
    result = json.loads(subprocess.check_output(base + ["--repeats", str(repeats), "--warmup", "2"],
                                                text=True).strip().splitlines()[-1])
    return result["fps"], None


def version(binary):
    output = subprocess.check_output([binary, "--quiet", "bench", "--arch", "mobilenet_v2_0.35",
                                      "--size", "64x64", "--repeats", "1", "--warmup", "0",
                                      "--json"], text=True,
                                     env=dict(os.environ, ONEDNN_VERBOSE="1"))
    for line in output.splitlines():
        if line.startswith("onednn_verbose,") and ",info,oneDNN v" in line:
            return line.split(",info,", 1)[1].split(" (")[0]
        if line.startswith("onednn_verbose,info,oneDNN v"):
            return line.split(",")[2].split(" (")[0]
    return "oneDNN (version not printed)"


def cases(a):
    for net in a.nets.split(","):
        for batch in a.batches.split(","):
            for precision in a.precisions.split(","):
                yield (f"{net} b{batch} {precision}",
                       ["--arch", net, "--size", a.size, "--batch", batch, "--precision", precision],
                       (net, int(batch), precision))
    for spec in filter(None, a.train.split(",")):
        net, size, batch = spec.split(":")
        for precision in ("fp32", "bf16"):
            yield (f"train {net} {size} b{batch} {precision}",
                   ["--train", "--arch", net, "--size", size, "--batch", batch, "--precision",
                    precision], None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="labpose built against oneDNN A")
    ap.add_argument("--b", required=True, help="labpose built against oneDNN B")
    ap.add_argument("--nets", default="resnet_50,mobilenet_v2_0.35,efficientnet_lite0")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--precisions", default="fp32,bf16,int8")
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--train", default="efficientnet_lite0:256x256:8")
    ap.add_argument("--json", help="also write the figures to this file")
    a = ap.parse_args()
    builds = {"a": os.path.abspath(a.a), "b": os.path.abspath(a.b)}
    names = {key: version(binary) for key, binary in builds.items()}
    print(f"a: {builds['a']} ({names['a']})\nb: {builds['b']} ({names['b']})", flush=True)
    print(f"threads: {os.environ.get('OMP_NUM_THREADS', os.cpu_count())}; medians of {a.rounds} "
          "rounds, builds alternating\n")
    print("| case | a | b | b/a | kernels a | kernels b |\n|---|---|---|---|---|---|")
    results = []
    for label, arguments, plan in cases(a):
        figures = {"a": [], "b": []}
        refused = None
        for r in range(a.rounds):
            for key in (("a", "b") if r % 2 == 0 else ("b", "a")):
                fps, reason = bench(builds[key], arguments, a.seconds)
                if fps is None:
                    refused = f"{key}: {reason}"
                    break
                figures[key].append(fps)
            if refused:
                break
        if refused:
            print(f"| {label} | — | — | — | {refused} | |", flush=True)
            continue
        kernels = {key: precision_peers.labpose_kernels(argparse.Namespace(labpose=binary,
                                                                           size=a.size), *plan)
                   if plan else "" for key, binary in builds.items()}
        fa, fb = statistics.median(figures["a"]), statistics.median(figures["b"])
        print(f"| {label} | {fa:.2f} | {fb:.2f} | {fb / fa:.2f} | {kernels['a']} | {kernels['b']} |",
              flush=True)
        results.append({"case": label, "a": figures["a"], "b": figures["b"], "ratio": fb / fa,
                        "kernels": kernels})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"builds": builds, "versions": names, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()

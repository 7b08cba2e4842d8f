#!/usr/bin/python3
"""Where a network's time goes, layer by layer, in labpose and in OpenVINO, in one run: labpose's
plan under ONEDNN_VERBOSE=1 (oneDNN's own time of every primitive it runs; labpose's own kernels,
which oneDNN does not see, are the difference to the frame time printed) and OpenVINO's default
precision with PERF_COUNT on the same network from ../shared/bench (its ONNX, made by
infer_peers.py; for a network it has no definition of, efficientnet_lite0-4, labpose's own ONNX
export, as tools/bench/precision_peers.py times it). Both: random weights, 4 bodyparts, 2 threads.

    /usr/bin/python3 tools/bench/layer_profile.py --peers-python PEERS_VENV/bin/python \\
        [--net resnet_50] [--batch 1] [--size 640x480] [--precision bf16] [--repeats 20]

It prints, for each engine, the time per frame by kind of kernel, then the slowest layers, so that
a gap between the two can be put on the layers where it lies (docs/precision.md uses it).
"""
import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import precision_peers  # noqa: E402  (exported_onnx: labpose's export of a network)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER_NAMES = precision_peers.PEER_NAMES  # labpose's network names -> ../shared/bench's

OV_PROFILE = """
import collections, json, sys, time
import numpy as np, openvino as ov
onnx_file, threads, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
core = ov.Core()
config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY", "PERF_COUNT": True}
network = core.read_model(onnx_file)
if len(sys.argv) > 4:  # a labpose export: (batch, height, width, 3) uint8 frames, made static
    network.reshape([int(v) for v in sys.argv[4].split(",")])
model = core.compile_model(network, "CPU", config)
request = model.create_infer_request()
shape = tuple(model.input(0).shape)
if model.input(0).element_type == ov.Type.u8:
    x = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
else:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
for _ in range(3):
    request.infer({0: x})
layers = collections.defaultdict(list)
walls = []
for _ in range(repeats):
    started = time.perf_counter()
    request.infer({0: x})
    walls.append(time.perf_counter() - started)
    for p in request.get_profiling_info():
        layers[(p.node_name, p.node_type, p.exec_type)].append(p.real_time.total_seconds() * 1e3)
print(json.dumps({"wall_ms": sorted(walls)[len(walls) // 2] * 1e3,
                  "layers": [[*key, sorted(v)[len(v) // 2]] for key, v in layers.items()]}))
"""


def labpose_bench(a, verbose):
    """The output of `labpose bench` for the case, with ONEDNN_VERBOSE=1 or without."""
    command = [a.labpose, "bench", "--arch", a.net, "--size", a.size, "--batch", str(a.batch),
               "--precision", a.precision, "--repeats", str(a.repeats), "--warmup", "2"]
    env = dict(os.environ, ONEDNN_VERBOSE="1" if verbose else "0")
    result = subprocess.run(command, text=True, capture_output=True, env=env)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed:\n{result.stderr}")
    return (result.stdout + result.stderr).splitlines()


def labpose_layers(a):
    """(frame ms, {(kind, implementation, shape): ms per frame}): the frame's time from a run
    without ONEDNN_VERBOSE (whose printing costs time), the layers' from one with it."""
    runs = 2 + a.repeats  # bench's warmup, then the timed repeats
    frame_ms = None
    for line in labpose_bench(a, verbose=False):
        if " ms per batch" in line:
            frame_ms = float(line.split(" ms per batch")[0].rsplit("(", 1)[1]) / a.batch
    times = collections.defaultdict(list)
    for line in labpose_bench(a, verbose=True):
        fields = line.strip().split(",")
        if "exec" in fields[:3] and len(fields) > 6:
            at = fields.index("exec")
            try:
                times[(fields[at + 2], fields[at + 3], fields[-2])].append(float(fields[-1]))
            except ValueError:
                continue
    per_frame = {}
    for key, values in times.items():
        per_run = len(values) // runs  # 0: done once when the plan was made (weights)
        if per_run:
            per_frame[key] = statistics.median(values) * per_run / a.batch
    return frame_ms, per_frame


def openvino_layers(a):
    """(frame ms, {(name, type, exec type): ms per frame}) of OpenVINO's default precision."""
    workdir = a.workdir or tempfile.mkdtemp(prefix="layer_profile_")
    w, h = a.size.lower().split("x")
    extra = []
    if a.net not in PEER_NAMES:  # no PyTorch definition in ../shared/bench: labpose's export
        a.workdir = workdir
        onnx_file = precision_peers.exported_onnx(a, a.net)
        extra = [f"{a.batch},{h},{w},3"]
    else:
        onnx_file = os.path.join(workdir, f"{PEER_NAMES[a.net]}_b{a.batch}_{w}x{h}.onnx")
    if not os.path.exists(onnx_file):
        subprocess.run([a.peers_python, os.path.join(ROOT, "..", "shared", "bench",
                                                     "infer_peers.py"),
                        "--nets", PEER_NAMES[a.net], "--batches", str(a.batch), "--engines",
                        "ov_default", "--size", a.size, "--seconds", "1", "--threads",
                        str(a.threads), "--workdir", workdir], check=True, capture_output=True)
    result = subprocess.run([a.peers_python, "-c", OV_PROFILE, onnx_file, str(a.threads),
                             str(a.repeats), *extra], text=True, capture_output=True)
    if result.returncode != 0:
        sys.exit(f"error: OpenVINO's profile failed:\n{result.stderr}")
    import json
    found = json.loads(result.stdout.strip().splitlines()[-1])
    layers = {(n, t, e): ms / a.batch for n, t, e, ms in found["layers"]}
    return found["wall_ms"] / a.batch, layers


def report(title, frame_ms, layers, kind_of, top):
    total = sum(layers.values())
    print(f"{title}: {frame_ms:.2f} ms per frame; its layers {total:.2f} ms")
    kinds = collections.Counter()
    counts = collections.Counter()
    for key, ms in layers.items():
        kinds[kind_of(key)] += ms
        counts[kind_of(key)] += 1
    for kind, ms in kinds.most_common():
        if ms >= 0.01:
            print(f"  {ms:8.3f} ms  {kind} ({counts[kind]} distinct)")
    print("  slowest:")
    for key, ms in sorted(layers.items(), key=lambda item: -item[1])[:top]:
        print(f"  {ms:8.3f} ms  {' '.join(key)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labpose", default=os.path.join(ROOT, "build", "tools", "labpose"))
    ap.add_argument("--peers-python", required=True, help="the python of the peers' virtualenv")
    ap.add_argument("--net", default="resnet_50")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--precision", default="bf16", help="labpose's; OpenVINO runs its default")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--workdir", help="keep the peer's ONNX here (default: a new temporary folder)")
    a = ap.parse_args()
    frame_ms, layers = labpose_layers(a)
    report(f"labpose {a.precision}", frame_ms, layers, lambda key: f"{key[0]} {key[1]}", a.top)
    frame_ms, layers = openvino_layers(a)
    report("OpenVINO default", frame_ms, layers, lambda key: f"{key[1]} {key[2]}", a.top)


if __name__ == "__main__":
    main()

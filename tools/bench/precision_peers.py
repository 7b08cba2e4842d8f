#!/usr/bin/python3
"""labpose inference in each precision against the strongest CPU peers, in one run: frames/s of
`labpose bench` (fp32, bf16, int8 where the CPU runs them) and of ONNX Runtime and OpenVINO (f32 and
its default precision, bf16 on a CPU with avx512_bf16) from ../shared/bench/infer_peers.py, case by
case in turn so that drift of a shared machine falls on every engine alike.

    /usr/bin/python3 tools/bench/precision_peers.py --peers-python PEERS_VENV/bin/python
        [--nets resnet_50,mobilenet_v2_0.35] [--batches 1,8] [--size 640x480] [--seconds 15]
        [--precisions fp32,bf16,int8] [--labpose build/tools/labpose] [--rounds 1]

PEERS_VENV is a virtualenv with torch, onnx, onnxruntime and openvino from PyPI (see
../shared/bench/README.md). Both sides: random weights, 4 bodyparts, 2 threads. With --rounds R each
case is measured R times (labpose and the peers alternating) and the medians are printed. The issue
targets are printed as ratios: labpose's fastest precision against OpenVINO's default (>= 1.1) and
labpose fp32 against OpenVINO f32 (>= 1.0).

A network that ../shared/bench has no PyTorch definition of (efficientnet_lite0-4) is compared on
labpose's own ONNX export instead: a demo project with that network, trained one iteration (speed
does not depend on the weights) and exported with `labpose export --onnx`, whose model.onnx (uint8
frames in, the normalization, the network, score maps and locref out) the peers run at the same
size and batch. Its outputs are not compared here (tests/python/onnx_reference.py does that).

So that a comparison says what it compared, each case also reports the kernels each engine ran for
its convolutions: for labpose, oneDNN's implementations from ONEDNN_VERBOSE=1 (for example
`brgconv:avx512_core_amx` or `jit:avx512_core_bf16`) and the layers its plan gave labpose's own
AVX-512 kernels (`labpose_winograd`: 3x3 layers of fp32 plans, and of bf16 ones on a CPU without
AMX; `labpose_depthwise`: depthwise layers of bf16 plans on a CPU with AMX), which `labpose bench
--json` counts, and for OpenVINO the primitive types of its compiled runtime model (for example
`brgconv_avx512_amx_bf16`).
"""
import collections
import tempfile
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER_NAMES = {"resnet_50": "resnet50", "mobilenet_v2_0.35": "mnv2_035", "mobilenet_v2_1.0": "mnv2_100"}
PEER_ENGINES = ["ort", "ov_f32", "ov_default"]


def labpose_fps(a, net, batch, precision):
    """Median frames/s of `labpose bench` with repeats covering about --seconds."""
    base = [a.labpose, "--quiet", "bench", "--arch", net, "--size", a.size, "--batch", str(batch),
            "--precision", precision, "--json"]
    probe = json.loads(subprocess.check_output(base + ["--repeats", "1", "--warmup", "1"],
                                               text=True).strip().splitlines()[-1])
    repeats = max(3, int(a.seconds / max(probe["median_s"], 1e-3)))
    result = json.loads(subprocess.check_output(base + ["--repeats", str(repeats), "--warmup", "2"],
                                                text=True).strip().splitlines()[-1])
    if result["precision"] != precision:
        sys.exit(f"error: labpose bench computed in {result['precision']}, not {precision}")
    return result["fps"]


def tally(names):
    """'a x3, b x1': how often each kernel ran, most frequent first."""
    return ", ".join(f"{name} x{count}" for name, count in collections.Counter(names).most_common())


def labpose_kernels(a, net, batch, precision):
    """oneDNN's convolution kernels in one run of the plan (ONEDNN_VERBOSE=1 exec lines)."""
    command = [a.labpose, "--quiet", "bench", "--arch", net, "--size", a.size, "--batch", str(batch),
               "--precision", precision, "--repeats", "1", "--warmup", "0", "--json"]
    env = dict(os.environ, ONEDNN_VERBOSE="1")
    output = subprocess.run(command, text=True, capture_output=True, check=True, env=env).stdout
    own, passes = {}, 1
    # The plan's own layers read its type; bench's fp32 calibration pass before an int8 plan does not.
    sources = {"fp32": ("src_f32",), "bf16": ("src_bf16",), "int8": ("src_u8", "src_s8")}[precision]
    kernels = []
    for line in output.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
            own = result.get("own_kernels", {})
            passes = -(-batch // result.get("frames_per_pass", batch))  # oneDNN's count runs
            continue
        fields = line.split(",")
        # onednn_verbose,[timestamp,]exec,cpu,convolution,<implementation>,<propagation>,<memory>,...
        if "exec" in fields[:3] and len(fields) > 6:
            at = fields.index("exec")
            if (fields[at + 2] in ("convolution", "deconvolution", "inner_product")
                    and fields[at + 5].startswith(sources)):
                kernels.append(fields[at + 3])
    for name, count in own.items():
        kernels += [f"labpose_{name}"] * (count * passes)
    return tally(kernels)


OV_KERNELS = """
import collections, sys
import openvino as ov
core = ov.Core()
config = {"INFERENCE_NUM_THREADS": int(sys.argv[2]), "PERFORMANCE_HINT": "LATENCY"}
if sys.argv[3] == "ov_f32":
    config["INFERENCE_PRECISION_HINT"] = "f32"
network = core.read_model(sys.argv[1])
if len(sys.argv) > 4:  # a labpose export: (batch, height, width, 3) uint8 frames, made static
    network.reshape([int(v) for v in sys.argv[4].split(",")])
model = core.compile_model(network, "CPU", config)
def text(value):
    return value.astype(str) if hasattr(value, "astype") else str(value)
kinds = collections.Counter()
for op in model.get_runtime_model().get_ops():
    info = op.get_rt_info()
    if text(info["layerType"]) in ("Convolution", "Deconvolution", "GroupConvolution"):
        kinds[text(info["primitiveType"])] += 1
print(", ".join(f"{name} x{count}" for name, count in kinds.most_common()))
"""


def openvino_kernels(a, onnx_file, engine, shape=None):
    """The primitive types of OpenVINO's compiled convolutions for `engine` (ov_f32, ov_default)."""
    extra = [",".join(map(str, shape))] if shape else []
    result = subprocess.run([a.peers_python, "-c", OV_KERNELS, onnx_file, str(a.threads), engine,
                             *extra], text=True, capture_output=True)
    if result.returncode != 0:
        return "unknown (" + (result.stderr.strip().splitlines() or ["no output"])[-1] + ")"
    return result.stdout.strip()


def peer_fps(a, net, batch):
    """frames/s of each peer engine for one case, from infer_peers.py's RESULT lines."""
    command = [a.peers_python, a.peers_script, "--nets", PEER_NAMES[net], "--batches", str(batch),
               "--engines", ",".join(PEER_ENGINES), "--size", a.size, "--seconds", str(a.seconds),
               "--threads", str(a.threads), "--workdir", a.workdir]
    output = subprocess.run(command, text=True, capture_output=True, check=True).stdout
    found = {}
    for line in output.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
            found[result["engine"]] = result
    missing = [engine for engine in PEER_ENGINES if engine not in found]
    if missing:
        sys.exit(f"error: infer_peers.py gave no result for {missing}:\n{output}")
    return {engine: found[engine]["fps"] for engine in PEER_ENGINES}, found["ov_default"].get("ov_precision")


EXPORT_TIMER = """
import json, statistics, sys, time
import numpy
onnx_file, engine, threads, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
shape = [int(v) for v in sys.argv[5].split(",")]
frames = numpy.random.default_rng(0).integers(0, 256, size=shape, dtype=numpy.uint8)
if engine == "ort":
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(onnx_file, options, providers=["CPUExecutionProvider"])
    run = lambda: session.run(None, {"frames": frames})
    precision = "f32"
else:
    import openvino as ov
    core = ov.Core()
    config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY"}
    if engine == "ov_f32":
        config["INFERENCE_PRECISION_HINT"] = "f32"
    network = core.read_model(onnx_file)
    network.reshape(shape)
    model = core.compile_model(network, "CPU", config)
    request = model.create_infer_request()
    tensor = ov.Tensor(frames)
    run = lambda: request.infer({0: tensor})
    hint = model.get_property("INFERENCE_PRECISION_HINT")
    precision = hint.get_type_name() if hasattr(hint, "get_type_name") else str(hint)
for _ in range(3):
    run()
times, started = [], time.perf_counter()
while time.perf_counter() - started < seconds or len(times) < 3:
    before = time.perf_counter()
    run()
    times.append(time.perf_counter() - before)
print(json.dumps({"fps": shape[0] / statistics.median(times), "precision": precision}))
"""


def exported_onnx(a, net):
    """model.onnx of a labpose export of `net` (made once per run, in the work folder)."""
    import live_latency  # noqa: E402  (exported_model: a demo project trained once, exported)
    return os.path.join(live_latency.exported_model(a.labpose, a.workdir, net), "model.onnx")


def export_peer_fps(a, net, batch):
    """frames/s of each peer engine on labpose's ONNX export of `net`, at --size and `batch`."""
    w, h = a.size.lower().split("x")
    shape = f"{batch},{h},{w},3"
    onnx_file = exported_onnx(a, net)
    found, ov_precision = {}, None
    for engine in PEER_ENGINES:
        output = subprocess.run([a.peers_python, "-c", EXPORT_TIMER, onnx_file, engine,
                                 str(a.threads), str(a.seconds), shape], text=True,
                                capture_output=True)
        if output.returncode != 0:
            sys.exit(f"error: {engine} on {onnx_file} failed:\n{output.stderr}")
        result = json.loads(output.stdout.strip().splitlines()[-1])
        found[engine] = result["fps"]
        if engine == "ov_default":
            ov_precision = result["precision"]
    return found, ov_precision


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peers-python", required=True, help="the python of a virtualenv with the peers")
    ap.add_argument("--peers-script",
                    default=os.path.join(os.path.dirname(ROOT), "shared", "bench", "infer_peers.py"))
    ap.add_argument("--labpose", default=os.path.join(ROOT, "build", "tools", "labpose"))
    ap.add_argument("--nets", default="resnet_50,mobilenet_v2_0.35")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--precisions", default="fp32,bf16,int8",
                    help="labpose's; those this CPU does not run fast are left out")
    ap.add_argument("--seconds", type=float, default=15.0, help="timed seconds per case and engine")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    with tempfile.TemporaryDirectory(prefix="precision_peers_") as workdir:
        a.workdir = workdir  # infer_peers.py's ONNX files, for OpenVINO's kernels
        measure(a)


def measure(a):

    doctor = subprocess.check_output([a.labpose, "doctor"], text=True)
    fast = next((line.split(None, 2)[2] for line in doctor.splitlines()
                 if line.strip().startswith("CPU precisions")), "fp32")
    offered = fast.split(" (")[0].split(", ")
    precisions = [p for p in a.precisions.split(",") if p in offered]
    print(f"labpose doctor: CPU precisions {fast}", flush=True)
    print(f"measuring labpose in {', '.join(precisions)} against {', '.join(PEER_ENGINES)}", flush=True)

    rows = []
    for net in a.nets.split(","):
        for batch in [int(b) for b in a.batches.split(",")]:
            measured = {name: [] for name in precisions + PEER_ENGINES}
            ov_precision = None
            for _ in range(a.rounds):
                for precision in precisions:
                    measured[precision].append(labpose_fps(a, net, batch, precision))
                peers, ov_precision = (peer_fps(a, net, batch) if net in PEER_NAMES
                                       else export_peer_fps(a, net, batch))
                for engine, fps in peers.items():
                    measured[engine].append(fps)
            row = {name: statistics.median(values) for name, values in measured.items()}
            row.update(net=net, batch=batch, ov_precision=ov_precision)
            w, h = a.size.lower().split("x")
            shape = None if net in PEER_NAMES else (batch, int(h), int(w), 3)
            onnx_file = (os.path.join(a.workdir, f"{PEER_NAMES[net]}_b{batch}_{w}x{h}.onnx")
                         if net in PEER_NAMES else exported_onnx(a, net))
            row["kernels"] = {f"labpose {p}": labpose_kernels(a, net, batch, p) for p in precisions}
            for engine in ("ov_f32", "ov_default"):
                row["kernels"][engine] = openvino_kernels(a, onnx_file, engine, shape)
            rows.append(row)
            print("RESULT " + json.dumps(row), flush=True)

    header = ["net, batch"] + [f"labpose {p}" for p in precisions] + [
        "ONNX Runtime", "OpenVINO f32", "OpenVINO default", "fastest / OV default", "fp32 / OV f32"]
    print("\n| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        fastest = max(row[p] for p in precisions)
        cells = [f"{row['net']}, {row['batch']}"] + [f"{row[p]:.2f}" for p in precisions] + [
            f"{row['ort']:.2f}", f"{row['ov_f32']:.2f}", f"{row['ov_default']:.2f} ({row['ov_precision']})",
            f"{fastest / row['ov_default']:.2f}", f"{row['fp32'] / row['ov_f32']:.2f}"]
        print("| " + " | ".join(cells) + " |")
    print(f"\nframes/s at {a.size}, {a.threads} threads, median of {a.rounds} round(s) of {a.seconds:g} s "
          "per case and engine")
    print("\nThe convolution kernels each engine ran (oneDNN's and labpose's own for labpose, "
          "OpenVINO's runtime model):")
    for row in rows:
        print(f"- {row['net']}, batch {row['batch']}:")
        for engine, kernels in row["kernels"].items():
            print(f"  - {engine}: {kernels}")


if __name__ == "__main__":
    main()

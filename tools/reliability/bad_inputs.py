#!/usr/bin/env python3
"""Bad inputs, as a careless or hostile user gives them: hand-edited and damaged config.yaml, label
tables, HDF5 files, videos, weight files and .npy batches, out-of-range options, and malformed
requests to the label server. Each case runs one command on a fresh copy of a small trained demo
project and is classified:

  clear     exit 1 or 2 with an `error:` line that names no C++ internals, prints no control
            characters or 40-digit numbers, and (where the case names one) names the bad file;
  accepted  exit 0 (listed: some inputs are legitimately accepted, e.g. an unknown config key);
  unclear   refused, but the message fails one of the checks above;
  crash     killed by a signal or an exit status above 3;
  hang      no answer within --timeout seconds;
  lost      a label file or config.yaml changed although the command must not write it.

Prints a table by class and the cases that were not `clear` or `accepted`; exits 1 when any case is
unclear, crashed, hung or lost data. Not a test (minutes): run it by hand,
  /usr/bin/python3 tools/reliability/bad_inputs.py --labpose build/tools/labpose
Needs pandas and PyTables (tools/install-deps.sh --tests).
"""
import argparse
import collections
import json
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

from project_state import Labpose, digest_tree

UNCLEAR = re.compile(r"std::|_M_|basic_ios|what\(\)|Segmentation|core dumped|Aborted|HDF5-DIAG|"
                     r"terminate called|Device or resource busy|bad file\b|yaml-cpp|"
                     r"Input/output error|stoi|stod|unknown error")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
LONG_NUMBER = re.compile(r"\d{40,}")
PROTECTED = re.compile(r"(^config\.yaml$|^labeled-data/.*CollectedData_[^/]*\.(csv|h5)$)")


class Case:
    def __init__(self, group, name, mutate, command, names=None, writes=(), warns=False):
        self.group, self.name, self.mutate, self.command = group, name, mutate, command
        self.names = names  # a file name the message must contain, if any
        self.writes = writes  # protected files this command may legitimately write
        self.warns = warns  # the command goes on (exit 0) with a warning that names the file


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w") as handle:
        handle.write(data)


def first_body(answer):
    """The body of the first HTTP response in `answer` (the server may answer a garbled request
    twice on one connection), as long as its Content-Length says."""
    head, _, rest = answer.partition("\r\n\r\n")
    length = re.search(r"(?im)^content-length:\s*(\d+)", head)
    return rest[:int(length.group(1))] if length else rest


def read(path):
    with open(path, "rb") as handle:
        return handle.read()


class Probe(Labpose):
    def __init__(self, args, work):
        super().__init__(args.labpose, work)
        self.timeout = args.timeout
        self.random = random.Random(args.seed)
        self.results = collections.defaultdict(collections.Counter)
        self.notes = []
        self.template = self.make_template()

    # --- the project every case starts from ---------------------------------------------------

    def make_template(self):
        config = self.demo_project("template", frames=40, labeled=8)
        project = os.path.dirname(config)
        env = dict(os.environ, OMP_NUM_THREADS="1")
        self.run("create-dataset", config, "--net", "mobilenet_v2_0.35", "--weights", "none")
        self.train_config(config, batch_size=2, crop_size="[64, 64]")
        self.run("train", config, "--max-iters", "2", "--device", "cpu", env=env)
        self.run("analyze", config, os.path.join(project, "videos", "synthetic_mouse.mp4"),
                 env=env)
        return project

    def fresh(self):
        target = os.path.join(self.work, "case")
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(self.template, target, symlinks=True)
        # The copy lives elsewhere: config.yaml's project_path and video_sets follow it.
        config = os.path.join(target, "config.yaml")
        text = open(config).read().replace(self.template, target)
        write(config, text)
        return target

    def run_case(self, case):
        project = self.fresh()
        paths = {"project": project, "config": os.path.join(project, "config.yaml"),
                 "labels": os.path.join(project, "labeled-data", "synthetic_mouse"),
                 "video": os.path.join(project, "videos", "synthetic_mouse.mp4"),
                 "work": self.work}
        paths["csv"] = next(os.path.join(paths["labels"], n) for n in os.listdir(paths["labels"])
                            if n.startswith("CollectedData_") and n.endswith(".csv"))
        paths["h5"] = paths["csv"][:-4] + ".h5"
        paths["train"] = os.path.dirname(self.train_config(paths["config"]))
        paths["snapshot"] = os.path.join(paths["train"], "snapshot-2.safetensors")
        paths["tracks"] = next(os.path.join(project, "videos", n) for n in
                               os.listdir(os.path.join(project, "videos")) if n.endswith(".h5"))
        case.mutate(paths)
        protected = {p: d for p, d in digest_tree(project, raw=True).items() if PROTECTED.search(p)}
        command = [part.format(**paths) for part in case.command]
        try:
            result = subprocess.run([self.binary, *command], capture_output=True, timeout=self.timeout,
                                    env=dict(os.environ, OMP_NUM_THREADS="1", LABPOSE_HEADLESS="1"))
            output = (result.stdout + result.stderr).decode("utf-8", "replace")
            verdict = self.classify(result.returncode, output, case)
        except subprocess.TimeoutExpired:
            verdict, output = "hang", ""
        after = {p: d for p, d in digest_tree(project, raw=True).items() if PROTECTED.search(p)}
        changed = [p for p in protected if after.get(p) != protected[p]
                   and not any(p.endswith(w) for w in case.writes)]
        if changed and verdict != "hang":
            verdict = "lost"
            output += f"\n(changed: {changed})"
        self.record(case.group, case.name, verdict, output)

    def classify(self, code, output, case):
        if code == 0 and case.warns:
            warned = any(line.lstrip().startswith("warning:") and case.names in line
                         for line in output.splitlines())
            return "clear" if warned and not CONTROL.search(output) else "unclear"
        if code == 0:
            return "accepted"
        if code < 0 or code > 3:
            return "crash"
        error_lines = [line for line in output.splitlines() if line.startswith("error:")]
        if (not error_lines or UNCLEAR.search(output) or CONTROL.search(output)
                or LONG_NUMBER.search(output)):
            return "unclear"
        if case.names and case.names not in output:
            return "unclear"
        return "clear"

    def record(self, group, name, verdict, output):
        print(f"{verdict:8} {group}: {name}", file=sys.stderr, flush=True)
        self.results[group][verdict] += 1
        if verdict not in ("clear", "accepted"):
            self.notes.append(f"{verdict:8} {group}: {name}: {output.strip()[-300:]!r}")
        elif verdict == "accepted":
            self.notes.append(f"accepted {group}: {name}")

    # --- the cases -----------------------------------------------------------------------------

    def config_cases(self):
        def replace_config(text):
            return lambda p: write(p["config"], text)

        def set_key(key, value):
            def mutate(p):
                text = open(p["config"]).read()
                if re.search(rf"(?m)^{re.escape(key)}:", text):
                    text = re.sub(rf"(?m)^{re.escape(key)}:.*(\n[ -].*)*",
                                  lambda _: f"{key}: {value}", text, count=1)
                else:
                    text += f"\n{key}: {value}\n"
                write(p["config"], text)
            return mutate

        whole = {
            "empty file": "",
            "only spaces": "   \n\n",
            "random bytes": bytes(self.random.randrange(256) for _ in range(2048)),
            "a list": "- a\n- b\n",
            "a scalar": "hello\n",
            "unclosed bracket": "Task: [demo\nscorer: me\n",
            "tab indentation": "Task: demo\nbodyparts:\n\t- a\n",
            "10000 nested lists": "[" * 10000 + "]" * 10000 + "\n",
            "alias bomb": "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 10)}]\n"
                for i in range(8)),
            "NUL bytes": b"Task: demo\x00\x00\nscorer: me\n",
            "invalid UTF-8": b"Task: d\xff\xfemo\nscorer: me\n",
            "1 MB line": "Task: " + "x" * (1 << 20) + "\n",
        }
        for name, text in whole.items():
            yield Case("config.yaml (whole file)", name, replace_config(text),
                       ["check-labels", "{config}"], names="config.yaml")
        yield Case("config.yaml (whole file)", "missing", lambda p: os.remove(p["config"]),
                   ["check-labels", "{config}"], names="config.yaml")
        yield Case("config.yaml (whole file)", "a folder",
                   lambda p: (os.remove(p["config"]), os.mkdir(p["config"])),
                   ["check-labels", "{config}"], names="config.yaml")
        yield Case("config.yaml (whole file)", "duplicate key",
                   lambda p: write(p["config"], open(p["config"]).read() + "\nscorer: other\n"),
                   ["check-labels", "{config}"], names="config.yaml")
        yield Case("config.yaml (whole file)", "alias bomb, then a rewrite",
                   lambda p: write(p["config"], open(p["config"]).read() +
                                   "\nbomb: &a [x,x,x,x,x,x,x,x]\n" + "".join(
                                       f"bomb{i}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 8)}]\n"
                                       for i in range(7))),
                   ["add-videos", "{config}", "{video}"], names="config.yaml",
                   writes=("config.yaml",))

        integers = ["-1", "0", "4294967298", "2147483648", "99999999999999999999999", "1.5",
                    "abc", "[1, 2]", "{a: 1}", "''", ".nan"]
        floats = ["-1", "2", ".nan", ".inf", "1e400", "abc", "[0.5]", "''"]
        commands = {
            "numframes2pick": (integers, ["extract-frames", "{config}", "--algo", "uniform"]),
            "start": (floats, ["extract-frames", "{config}", "--algo", "uniform"]),
            "stop": (floats, ["extract-frames", "{config}", "--algo", "uniform"]),
            "iteration": (integers, ["create-dataset", "{config}", "--shuffle", "1", "--weights", "none"]),
            "TrainingFraction": (floats + ["[1.0]", "[0.0]", "[0.5, abc]", "[]"],
                                 ["create-dataset", "{config}", "--shuffle", "1", "--weights", "none"]),
            "snapshotindex": (integers, ["analyze", "{config}", "{video}", "--overwrite"]),
            "batch_size": (integers, ["analyze", "{config}", "{video}", "--overwrite"]),
            "pcutoff": (floats, ["check-labels", "{config}"]),
            "dotsize": (integers, ["check-labels", "{config}"]),
            "alphavalue": (floats, ["check-labels", "{config}"]),
            "colormap": (["''", "[1]", "\"\\e[31mred\\e[0m\"", "'x' "], ["check-labels", "{config}"]),
            "bodyparts": (["[]", "''", "[a, a]", "[[a]]", "{a: 1}", "[\"\\e[2Jsnout\"]"],
                          ["check-labels", "{config}"]),
            "skeleton": (["[[snout]]", "[[snout, nothere]]", "abc", "[[1, 2, 3]]"],
                         ["check-labels", "{config}"]),
            "video_sets": (["[]", "abc", "{x.mp4: {crop: 'a, b'}}", "{x.mp4: {crop: '0, -5, 0, 9'}}"],
                           ["extract-frames", "{config}", "--algo", "uniform"]),
            "default_net_type": (["nonet", "[1]", "''"], ["create-dataset", "{config}",
                                                          "--shuffle", "2"]),
            "multianimalproject": (["maybe", "[true]", "2"], ["check-labels", "{config}"]),
            "x1": (integers[:6], ["analyze", "{config}", "{video}", "--overwrite"]),
        }
        for key, (values, command) in commands.items():
            for value in values:
                writes = ("config.yaml",) if command[0] == "create-dataset" else ()
                yield Case("config.yaml (values)", f"{key}: {value}", set_key(key, value), command,
                           names="config.yaml", writes=writes)

    def label_cases(self):
        # The CSV alone (its .h5 removed): beside a fixed-format .h5 the .h5 is read, as in
        # DeepLabCut, and the CSV's damage is a warning (the case "beside its .h5" below).
        def edit_csv(change, keep_h5=False):
            def mutate(p):
                write(p["csv"], change(open(p["csv"]).read()))
                if not keep_h5:
                    os.remove(p["h5"])
            return mutate

        def row(text, n):
            return text.splitlines()[n]

        changes = {
            "empty": lambda t: "",
            "truncated in a row": lambda t: t[: len(t) * 2 // 3],
            "header rows only": lambda t: "\n".join(t.splitlines()[:3]) + "\n",
            "two header rows": lambda t: "\n".join(t.splitlines()[1:]) + "\n",
            "a row with a missing cell": lambda t: t.replace(row(t, 3), row(t, 3).rsplit(",", 1)[0]),
            "a row with an extra cell": lambda t: t.replace(row(t, 3), row(t, 3) + ",5"),
            "a word for a number": lambda t: t.replace(row(t, 3), re.sub(r",[0-9.]+", ",abc",
                                                                         row(t, 3), count=1)),
            "1e400": lambda t: t.replace(row(t, 3), re.sub(r",[0-9.]+", ",1e400", row(t, 3),
                                                           count=1)),
            "negative coordinates": lambda t: t.replace(row(t, 3), re.sub(r",([0-9.]+)", ",-\\1",
                                                                          row(t, 3))),
            "unknown bodypart": lambda t: t.replace("snout", "nose"),
            "duplicate row": lambda t: t + row(t, 3) + "\n",
            "NUL bytes": lambda t: t.replace(",", ",\x00", 3),
            "terminal escapes": lambda t: t.replace("img", "\x1b[2Jimg", 1),
            "CRLF": lambda t: t.replace("\n", "\r\n"),
            "a quoted comma": lambda t: t.replace(row(t, 3), row(t, 3).replace(",", ',"1,2",', 1)),
            "5000 columns": lambda t: "\n".join(line + ",1" * 5000 for line in t.splitlines()),
        }
        for name, change in changes.items():
            for command in (["check-labels", "{config}"],
                            ["create-dataset", "{config}", "--shuffle", "1", "--weights", "none"]):
                yield Case("label CSV (hand-edited)", f"{name} / {command[0]}", edit_csv(change),
                           command, names="CollectedData",
                           writes=("config.yaml",) if command[0] == "create-dataset" else ())
        for name in ("truncated in a row", "a word for a number", "negative coordinates"):
            yield Case("label CSV (hand-edited)", f"{name}, beside its .h5 / check-labels",
                       edit_csv(changes[name], keep_h5=True), ["check-labels", "{config}"],
                       names="CollectedData_labpose.csv", warns=True)

    def h5_cases(self):
        def flip(offsets, key):
            def mutate(p):
                data = bytearray(read(p[key]))
                for offset in offsets:
                    data[offset % len(data)] ^= 0xFF
                write(p[key], bytes(data))
            return mutate

        def truncate(fraction, key):
            return lambda p: write(p[key], read(p[key])[: int(len(read(p[key])) * fraction)])

        for key, group, commands in (
                ("h5", "label .h5 (damaged)", (["check-labels", "{config}"],
                                               ["create-dataset", "{config}", "--shuffle", "1",
                                                "--weights", "none"])),
                ("tracks", "analysis .h5 (damaged)",
                 (["filter", "{config}", "{video}"], ["plot-trajectories", "{config}", "{video}"]))):
            size = len(read(os.path.join(self.template, "labeled-data", "synthetic_mouse",
                                         "CollectedData_labpose.h5")))
            cases = {f"byte {o} flipped": flip([o], key) for o in
                     sorted(self.random.sample(range(size), 24))}
            cases.update({f"3 random bytes flipped ({i})": flip(self.random.sample(range(size), 3),
                                                                key) for i in range(8)})
            cases.update({f"truncated to {int(f * 100)} %": truncate(f, key)
                          for f in (0.0, 0.1, 0.5, 0.9, 0.99)})
            cases["text instead of HDF5"] = lambda p, k=key: write(p[k], "scorer,a\n")
            for name, mutate in cases.items():
                for command in commands:
                    yield Case(group, f"{name} / {command[0]}", mutate, command, names=".h5",
                               writes=("config.yaml",) if command[0] == "create-dataset" else ())

    def video_cases(self):
        def replace(data):
            return lambda p: write(p["video"], data)

        def damage(start, length):
            def mutate(p):
                data = bytearray(read(p["video"]))
                for i in range(start, min(start + length, len(data))):
                    data[i] = (i * 37) & 0xFF
                write(p["video"], bytes(data))
            return mutate

        def huge_size(p):
            # The container's track header claims 60000 x 60000 pixels.
            data = bytearray(read(p["video"]))
            at = data.find(b"tkhd")
            if at > 0:
                version = data[at + 4]
                width_at = at + 4 + (88 if version == 1 else 76)
                data[width_at:width_at + 8] = struct.pack(">II", 60000 << 16, 60000 << 16)
            at = data.find(b"avc1")
            if at > 0:
                data[at + 28:at + 32] = struct.pack(">HH", 60000, 60000)
            write(p["video"], bytes(data))

        cases = {
            "empty file": replace(b""),
            "text file": replace("this is not a video\n"),
            "random bytes": replace(bytes(self.random.randrange(256) for _ in range(100000))),
            "truncated to half": lambda p: write(p["video"], read(p["video"])[: len(read(p["video"])) // 2]),
            "first 4 KB damaged": damage(0, 4096),
            "middle damaged": lambda p: damage(len(read(p["video"])) // 2, 20000)(p),
            "header claims 60000x60000": huge_size,
            "a folder": lambda p: (os.remove(p["video"]), os.mkdir(p["video"])),
            "missing": lambda p: os.remove(p["video"]),
        }
        for name, mutate in cases.items():
            for command in (["extract-frames", "{config}", "--algo", "uniform"],
                            ["analyze", "{config}", "{video}", "--overwrite"],
                            ["add-videos", "{config}", "{video}", "--copy-videos"]):
                yield Case("video", f"{name} / {command[0]}", mutate, command,
                           names="synthetic_mouse.mp4",
                           writes=("config.yaml",) if command[0] == "add-videos" else ())

    def weight_cases(self):
        def header(p):
            data = read(p["snapshot"])
            size = struct.unpack("<Q", data[:8])[0]
            return data, size, json.loads(data[8:8 + size])

        def rewrite(change):
            def mutate(p):
                data, size, head = header(p)
                body = data[8 + size:]
                changed = bytearray(body)
                change(head, changed)
                body = changed
                text = json.dumps(head).encode()
                write(p["snapshot"], struct.pack("<Q", len(text)) + text + bytes(body))
            return mutate

        def first_tensor(head):
            return next(k for k in head if k != "__metadata__")

        def nan_values(head, body):
            start = head[first_tensor(head)]["data_offsets"][0]
            body[start:start + 16] = struct.pack("<ffff", *[float("nan")] * 4)

        def overlap(head, body):
            names = [k for k in head if k != "__metadata__"]
            head[names[1]]["data_offsets"] = head[names[0]]["data_offsets"]

        cases = {
            "empty": lambda p: write(p["snapshot"], b""),
            "truncated": lambda p: write(p["snapshot"], read(p["snapshot"])[:5000]),
            "header length 2^60": lambda p: write(p["snapshot"], struct.pack("<Q", 1 << 60) +
                                                  read(p["snapshot"])[8:]),
            "header not JSON": lambda p: write(p["snapshot"], struct.pack("<Q", 10) + b"{not json}"),
            "NaN weights": rewrite(nan_values),
            "overlapping tensors": rewrite(overlap),
            "offsets past the end": rewrite(lambda h, b: h[first_tensor(h)].update(
                data_offsets=[0, 1 << 40])),
            "a shape that does not fit": rewrite(lambda h, b: h[first_tensor(h)].update(
                shape=[1 << 30, 1 << 30])),
            "unknown dtype": rewrite(lambda h, b: h[first_tensor(h)].update(dtype="F128")),
            "a tensor missing": rewrite(lambda h, b: h.pop(first_tensor(h))),
            "negative offsets": rewrite(lambda h, b: h[first_tensor(h)].update(
                data_offsets=[-8, 8])),
        }
        for name, mutate in cases.items():
            # Index 0 is snapshot-2.safetensors (the best one, snapshot-best-2, is last).
            for command in (["evaluate", "{config}", "--snapshot", "0"],
                            ["analyze", "{config}", "{video}", "--snapshot", "0", "--overwrite"],
                            ["create-dataset", "{config}", "--shuffle", "3", "--net",
                             "mobilenet_v2_0.35", "--weights", "{snapshot}"],
                            ["net", "forward", "--arch", "mobilenet_v2_0.35", "--bodyparts", "4",
                             "--weights", "{snapshot}", "--input", "{work}/batch.npy",
                             "--output-dir", "{work}/net-out"]):
                yield Case("weights (.safetensors)", f"{name} / {' '.join(command[:2])}", mutate,
                           command, names="snapshot-2.safetensors",
                           writes=("config.yaml",) if command[0] == "create-dataset" else ())

    def npy_cases(self):
        def npy(header, data=b""):
            text = header.encode()
            text += b" " * ((64 - (10 + len(text) + 1) % 64) % 64) + b"\n"
            return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + data

        good = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 64, 64), }"
        cases = {
            "huge shape": npy("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (100000, 3, 100000, 100000), }"),
            "shape product overflows": npy("{'descr': '<f4', 'fortran_order': False, "
                                           "'shape': (4294967296, 4294967296, 3, 1), }"),
            "float64": npy(good.replace("<f4", "<f8"), b"\0" * (3 * 64 * 64 * 8)),
            "fortran order": npy(good.replace("False", "True"), b"\0" * (3 * 64 * 64 * 4)),
            "truncated data": npy(good, b"\0" * 100),
            "bad magic": b"NUMPY" + b"\0" * 200,
            "header not a dict": npy("[1, 2, 3]"),
            "rank 2": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 64), }",
                          b"\0" * 768),
            "NaN pixels": npy(good, struct.pack("<f", float("nan")) * (3 * 64 * 64)),
        }
        for name, data in cases.items():
            yield Case("input batch (.npy)", name,
                       lambda p, d=data: write(os.path.join(p["work"], "batch.npy"), d),
                       ["net", "forward", "--arch", "mobilenet_v2_0.35", "--bodyparts", "4",
                        "--weights", "{snapshot}", "--input", "{work}/batch.npy", "--output-dir",
                        "{work}/net-out"], names="batch.npy")

    def option_cases(self):
        nothing = lambda p: None  # noqa: E731
        options = [
            ["label", "{config}", "--port", "1" + "0" * 300],
            ["label", "{config}", "--port", "70000"],
            ["label", "{config}", "--port", "-1"],
            ["extract-frames", "{config}", "--num", "1" + "0" * 300],
            ["extract-frames", "{config}", "--num", "0"],
            ["extract-frames", "{config}", "--num", "abc"],
            ["extract-frames", "{config}", "--algo", "magic"],
            ["train", "{config}", "--max-iters", "-5"],
            ["train", "{config}", "--batch-size", "1" + "0" * 50],
            ["train", "{config}", "--device", "cuda"],
            ["train", "{config}", "--device", "cuda:99"],
            ["train", "{config}", "--device", "tpu"],
            ["train", "{config}", "--max-minutes", "-1"],
            ["analyze", "{config}", "{video}", "--shard", "3/2"],
            ["analyze", "{config}", "{video}", "--shard", "a/b"],
            ["analyze", "{config}", "{video}", "--crop", "1,2,3"],
            ["analyze", "{config}", "{video}", "--crop", "50,10,0,10"],
            ["analyze", "{config}", "{video}", "--batch-size", "0"],
            ["evaluate", "{config}", "--training-fraction", "2"],
            ["evaluate", "{config}", "--snapshot", "nothere"],
            ["filter", "{config}", "{video}", "--window", "-3"],
            ["filter", "{config}", "{video}", "--type", "magic"],
            ["create-dataset", "{config}", "--net", "resnet_9000"],
            ["bench", "--arch", "mobilenet_v2_0.35", "--size", "0x0", "--batch", "1"],
            ["bench", "--arch", "mobilenet_v2_0.35", "--size", "99999x99999", "--batch", "1"],
            ["no-such-command"],
            ["check-labels"],
            ["check-labels", "{config}", "--no-such-option"],
            ["check-labels", "{work}/new\nline/config.yaml"],
        ]
        for command in options:
            yield Case("command-line options", " ".join(command).replace("{config}", "C")
                       .replace("{video}", "V")[:80], nothing, command)

    def pose_cfg_cases(self):
        def set_value(key, value):
            def mutate(p):
                path = os.path.join(p["train"], "pose_cfg.yaml")
                text = open(path).read()
                text = re.sub(rf"(?m)^{key}:.*(\n[ -].*)*", lambda _: f"{key}: {value}", text,
                              count=1)
                write(path, text)
            return mutate

        values = {"batch_size": ["0", "-1", "100000000000", "abc"],
                  "crop_size": ["[0, 0]", "[1, 2, 3]", "abc", "[100000, 100000]"],
                  "multi_step": ["[]", "[[abc, 5]]", "[[0.1, -5]]", "[[.nan, 10]]"],
                  "optimizer": ["magic", "[adam]"],
                  "global_scale": ["0", "-1", ".inf"],
                  "pos_dist_thresh": ["-1", "0", ".nan"],
                  "mirror": ["maybe"],
                  "rotation": ["1e400"],
                  "init_weights": ["/no/such/file.safetensors"]}
        for key, options in values.items():
            for value in options:
                yield Case("train/pose_cfg.yaml", f"{key}: {value}", set_value(key, value),
                           ["train", "{config}", "--max-iters", "3", "--resume"],
                           names="pose_cfg.yaml")

    # --- the label server ----------------------------------------------------------------------

    def server_cases(self):
        """Raw HTTP requests to a running label server; it must answer each and keep serving."""
        project = self.fresh()
        config = os.path.join(project, "config.yaml")
        labels = os.path.join(project, "labeled-data", "synthetic_mouse")
        before = {n: read(os.path.join(labels, n)) for n in os.listdir(labels)
                  if n.startswith("CollectedData_")}
        server = subprocess.Popen([self.binary, "label", config, "--no-browser"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        base, token = re.match(r"http://([^/]+)/\?token=(\w+)",
                               server.stdout.readline().strip()).groups()
        host, port = base.split(":")
        port = int(port)

        def send(raw, wait=True):
            connection = socket.create_connection((host, port), timeout=self.timeout)
            connection.sendall(raw)
            if not wait:
                return connection, ""
            chunks = []
            try:
                while True:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    chunks.append(chunk)
            except socket.timeout:
                return None, "TIMEOUT"
            connection.close()
            return None, b"".join(chunks).decode("utf-8", "replace")

        def post(path, body, content_type="application/json", auth=True):
            head = (f"POST {path} HTTP/1.1\r\nHost: {base}\r\nConnection: close\r\n"
                    f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n")
            if auth:
                head += f"X-Labpose-Token: {token}\r\n"
            return (head + "\r\n").encode() + (body if isinstance(body, bytes) else body.encode())

        def get(path, auth=True):
            head = f"GET {path} HTTP/1.1\r\nHost: {base}\r\nConnection: close\r\n"
            if auth:
                head += f"X-Labpose-Token: {token}\r\n"
            return (head + "\r\n").encode()

        point = {"video": "synthetic_mouse", "image": "img00.png", "bodypart": "snout"}
        requests = {
            "no token": get("/api/project", auth=False),
            "wrong token": get("/api/project", auth=False)[:-2] + b"X-Labpose-Token: 00\r\n\r\n",
            "not JSON": post("/api/point", "{x: 1"),
            "JSON list": post("/api/point", "[1, 2]"),
            "missing fields": post("/api/point", "{}"),
            "x as a string": post("/api/point", json.dumps({**point, "x": "1", "y": 2})),
            "x NaN": post("/api/point", '{"video": "synthetic_mouse", "image": "img00.png", '
                                        '"bodypart": "snout", "x": NaN, "y": 1}'),
            "x 1e400": post("/api/point", '{"video": "synthetic_mouse", "image": "img00.png", '
                                          '"bodypart": "snout", "x": 1e400, "y": 1}'),
            "point outside the image": post("/api/point", json.dumps({**point, "x": -5, "y": 1e9})),
            "unknown bodypart": post("/api/point", json.dumps({**point, "bodypart": "wing",
                                                               "x": 1, "y": 1})),
            "image ../config.yaml": get("/api/image?video=synthetic_mouse&image=../../config.yaml"),
            "video ..": get("/api/frame?video=..&image=config.yaml"),
            "absolute image path": get("/api/image?video=synthetic_mouse&image=/etc/passwd"),
            "content type application/jsonfoo": post("/api/point", json.dumps({**point, "x": 1,
                                                                               "y": 1}),
                                                     "application/jsonfoo"),
            "form post": post("/api/point", "x=1&y=2", "application/x-www-form-urlencoded"),
            "1 MB body": post("/api/point", "{" + " " * (1 << 20) + "}"),
            "Content-Length larger than the body": post("/api/point", "{}")[:-2],
            "garbage request line": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" * 10 + b"\r\n\r\n",
            "10000 headers": b"GET / HTTP/1.1\r\n" + b"X-A: b\r\n" * 10000 + b"\r\n",
            "8 KB URL": get("/api/frame?video=" + "a" * 8192),
            "terminal escapes in the video name": get("/api/frame?video=%1b%5b2J&image=a.png"),
        }
        for name, raw in requests.items():
            _, answer = send(raw)
            status = re.match(r"HTTP/1\.[01] (\d+)", answer)
            code = int(status.group(1)) if status else 0
            if answer == "TIMEOUT" or server.poll() is not None:
                verdict = "hang" if answer == "TIMEOUT" else "crash"
            elif 400 <= code < 500 and not CONTROL.search(first_body(answer)):
                verdict = "clear"
            elif code == 0 and name in ("garbage request line", "10000 headers"):
                verdict = "clear"  # the connection was closed: nothing to answer
            elif 200 <= code < 300:
                verdict = "accepted"
            else:
                verdict = "unclear"
            self.record("label server requests", name, verdict, answer[:300])
        # 40 half-open connections, then a real request: it must still be answered.
        idle = [send(b"GET /api/proj", wait=False)[0] for _ in range(40)]
        start = time.monotonic()
        _, answer = send(get("/api/project"))
        waited = time.monotonic() - start
        verdict = "clear" if answer.startswith("HTTP/1.1 200") else "hang"
        self.record("label server requests", f"40 half-open connections (answered in {waited:.2f} s)",
                    verdict, answer[:200])
        for connection in idle:
            connection.close()
        server.terminate()
        server.wait()
        after = {n: read(os.path.join(labels, n)) for n in before}
        if after != before:
            self.record("label server requests", "labels after the refused requests", "lost", "")

    def all_cases(self):
        for generator in (self.config_cases, self.label_cases, self.h5_cases, self.video_cases,
                          self.weight_cases, self.npy_cases, self.option_cases,
                          self.pose_cfg_cases):
            yield from generator()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labpose", default="build/tools/labpose")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="run the classes whose name contains this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="labpose-bad-inputs-") as work:
        probe = Probe(args, work)
        # A valid batch for the weight cases that use `net forward`.
        header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 64, 64), }"
        header += b" " * ((64 - (10 + len(header) + 1) % 64) % 64) + b"\n"
        write(os.path.join(work, "batch.npy"), b"\x93NUMPY\x01\x00" +
              struct.pack("<H", len(header)) + header + b"\0" * (3 * 64 * 64 * 4))
        for case in probe.all_cases():
            if args.only in case.group:
                probe.run_case(case)
        if args.only in "label server requests":
            probe.server_cases()
    verdicts = ["clear", "accepted", "unclear", "crash", "hang", "lost"]
    print(f"{'class':34} {'tried':>5} " + " ".join(f"{v:>8}" for v in verdicts))
    totals = collections.Counter()
    for group, counts in probe.results.items():
        totals.update(counts)
        print(f"{group:34} {sum(counts.values()):5} " + " ".join(f"{counts[v]:8}" for v in verdicts))
    print(f"{'all':34} {sum(totals.values()):5} " + " ".join(f"{totals[v]:8}" for v in verdicts))
    for note in probe.notes:
        print(note)
    sys.exit(1 if any(totals[v] for v in ("unclear", "crash", "hang", "lost")) else 0)


if __name__ == "__main__":
    main()

"""What the reliability campaigns share: running labpose, demo projects, and digests of a project's
files to tell an old file from a new one and both from a torn one. Not a test framework."""
import hashlib
import json
import os
import pickle
import re
import shutil
import struct
import subprocess

import pandas as pd

TEMP_NAME = re.compile(r"\.tmp-|\.creating-")


def table_digest(path):
    """The digest of what pandas reads from an HDF5 table, read in a forked child: libhdf5 can crash
    on a damaged file, and then the file is compared by its bytes. None when it cannot be read."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        try:
            table = pd.read_hdf(path)
            os.write(writer, ("table:" + hashlib.sha256(table.to_csv().encode()).hexdigest())
                     .encode())
        except BaseException:  # noqa: BLE001 - an unreadable file is compared by its bytes
            pass
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as answer:
        text = answer.read().decode()
    os.waitpid(pid, 0)
    return text or None


def snapshot_header(data):
    """(header length, header dictionary) of a safetensors file's bytes; None when unreadable."""
    try:
        size = struct.unpack("<Q", data[:8])[0]
        header = json.loads(data[8:8 + size])
    except (struct.error, ValueError):
        return None
    return (size, header) if isinstance(header, dict) else None


def snapshot_digest(data):
    """A snapshot's digest without its training time (`seconds` in the metadata), the one field two
    identical runs differ in; None when the header cannot be read."""
    parsed = snapshot_header(data)
    if parsed is None:
        return None
    size, header = parsed
    metadata = header.get("__metadata__", {})
    if isinstance(metadata, dict):
        metadata.pop("seconds", None)
    text = json.dumps(header, sort_keys=True).encode()
    return "snapshot:" + hashlib.sha256(text + data[8 + size:]).hexdigest()


# When an analysis ran, how fast, and where a resumed one started: what two runs that make the same
# tracks differ in.
TIMES = ("start", "stop", "run_duration", "started", "finished", "seconds", "frames_per_second",
         "resumed_from_frame")


def without_times(value):
    """An analysis's metadata without TIMES."""
    if isinstance(value, dict):
        return {str(k): without_times(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, (list, tuple)):
        return [without_times(v) for v in value]
    return value


def metadata_digest(path):
    """The digest of an analysis's _meta.json or _meta.pickle without its times; None when it
    cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        value = pickle.loads(data) if path.endswith(".pickle") else json.loads(data)
    except Exception:  # noqa: BLE001 - a torn or foreign file is compared by its bytes
        return None
    text = json.dumps(without_times(value), sort_keys=True, default=str)
    return "meta:" + hashlib.sha256(text.encode()).hexdigest()


def whole_snapshot(path):
    """A snapshot written to its end: a header that parses and tensors that fill the file."""
    with open(path, "rb") as handle:
        data = handle.read()
    parsed = snapshot_header(data)
    if parsed is None:
        return False
    size, header = parsed
    try:
        end = max((entry["data_offsets"][1] for key, entry in header.items()
                   if key != "__metadata__"), default=0)
    except (KeyError, TypeError, IndexError):
        return False
    return len(data) == 8 + size + end


def digest(path):
    """A file's sha256, of what matters: for HDF5 tables what pandas reads (HDF5 files carry their
    write time); snapshots, learning_stats.csv and an analysis's metadata without their timings. learning_stats.csv's
    digest is its text, so that a log cut at a line can be told from a torn one (is_log_prefix)."""
    name = os.path.basename(path)
    if TEMP_NAME.search(name):
        pass
    elif name.endswith(".h5"):
        table = table_digest(path)
        if table:
            return table
    elif name.endswith(".safetensors"):
        with open(path, "rb") as handle:
            snapshot = snapshot_digest(handle.read())
        if snapshot:
            return snapshot
    elif name.endswith(("_meta.json", "_meta.pickle")):
        meta = metadata_digest(path)
        if meta:
            return meta
    elif name == "learning_stats.csv":
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().split("\n")
        if lines and lines[0].endswith(",seconds"):
            lines = [line.rsplit(",", 1)[0] if line else line for line in lines]
        return "log:" + "\n".join(lines)
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def is_log_prefix(value, complete):
    """True when `value` is the digest of a log that holds whole lines of `complete`'s, in order:
    what a run stopped part way (a full disk, a kill) leaves."""
    return (value is not None and complete is not None and value.startswith("log:")
            and complete.startswith(value) and value.endswith("\n"))


def whole_png(path):
    """A PNG file that was written to its end (signature first, IEND chunk last)."""
    with open(path, "rb") as handle:
        data = handle.read()
    return data.startswith(b"\x89PNG\r\n\x1a\n") and data.endswith(b"IEND\xaeB`\x82")


def digest_tree(root, raw=False):
    """{relative path: digest} of every file under root, temp files included; `raw`: of the bytes
    (did anything write the file), not of what the file says (digest)."""
    def one(path):
        if raw:
            with open(path, "rb") as handle:
                return hashlib.sha256(handle.read()).hexdigest()
        return digest(path)
    return {os.path.relpath(os.path.join(folder, name), root): one(os.path.join(folder, name))
            for folder, _, names in os.walk(root) for name in names}


def temp_files(files):
    return sorted(path for path in files if TEMP_NAME.search(os.path.basename(path)))


def image_of(key):
    """The image name of a label table's row key (one path, or DeepLabCut 3's three columns)."""
    return key[-1] if isinstance(key, tuple) else str(key).split("/")[-1]


def restore(pristine, project):
    shutil.rmtree(project, ignore_errors=True)
    shutil.copytree(pristine, project, symlinks=True, copy_function=shutil.copy2)



class Labpose:
    """Runs one labpose binary; `work` is the campaign's scratch folder."""

    def __init__(self, binary, work):
        self.binary = os.path.abspath(binary)
        self.work = work

    def run(self, *arguments, check=True, env=None):
        result = subprocess.run([self.binary, "--quiet", *arguments], capture_output=True,
                                text=True, env=env)
        if check and result.returncode != 0:
            raise RuntimeError(f"labpose {' '.join(arguments)} failed:\n"
                               f"{result.stdout}{result.stderr}")
        return result

    def demo_project(self, name, frames=60, labeled=10, parent=None):
        """A synthetic demo project (video, labels) in a new folder; returns its config.yaml."""
        folder = os.path.join(parent or self.work, name)
        os.makedirs(folder)
        made = self.run("demo", "--project-only", "--dir", folder, "--frames", str(frames),
                        "--labeled-frames", str(labeled))
        return made.stdout.splitlines()[0]

    def train_config(self, config, **values):
        """The train/pose_cfg.yaml of shuffle 1 (create-dataset first), with `values` set."""
        project = os.path.dirname(config)
        pose = next(os.path.join(folder, name) for folder, _, names in
                    os.walk(os.path.join(project, "labpose-models")) for name in names
                    if name == "pose_cfg.yaml" and folder.endswith("train"))
        text = open(pose).read()
        for key, value in values.items():
            text = re.sub(rf"(?m)^{key}:.*$", f"{key}: {value}", text)
        with open(pose, "w") as handle:
            handle.write(text)
        return pose

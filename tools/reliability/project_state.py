"""What the reliability campaigns share: running labpose, demo projects, and digests of a project's
files to tell an old file from a new one and both from a torn one. Not a test framework."""
import hashlib
import os
import re
import shutil
import subprocess

import pandas as pd

TEMP_NAME = re.compile(r"\.tmp-|\.creating-")


def digest(path):
    """A file's sha256; for HDF5 tables, of what pandas reads (HDF5 files carry their write time)."""
    if path.endswith(".h5") and not TEMP_NAME.search(os.path.basename(path)):
        try:
            table = pd.read_hdf(path)
            return "table:" + hashlib.sha256(table.to_csv().encode()).hexdigest()
        except Exception:  # noqa: BLE001 - an unreadable file is compared by its bytes
            pass
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def digest_tree(root):
    """{relative path: digest} of every file under root, temp files included."""
    return {os.path.relpath(os.path.join(folder, name), root): digest(os.path.join(folder, name))
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

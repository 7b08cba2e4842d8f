#!/usr/bin/env python3
"""Disk-full campaigns: each labpose command run with its project on a small file system filled to
leave 0 bytes to a few MB free, then checked.

For every amount of free space: the command either succeeds or exits 1 (never a crash or a hang)
with a message that says "no space left on <folder>"; every file is the version from before or the
one a run with room writes (never a torn one); once space is freed the same command succeeds and
leaves the files a run with room leaves, with no temp file behind. The labeling scenario fills the
disk under a running `labpose label`: a save is refused with the reason, the next one after space
is freed succeeds, and the session backup is whole or absent. Prints one line per scenario; exits 1
if any run broke a promise.

Not a test (it mounts file systems and takes minutes); run it by hand as root:
  /usr/bin/python3 tools/reliability/disk_full.py --labpose build/tools/labpose
Needs pandas and PyTables (tools/install-deps.sh --tests).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

from project_state import (Labpose, TEMP_NAME, digest_tree, is_log_prefix, restore, temp_files,
                           whole_png, whole_snapshot)

# Free space left on the small disk for each run, in bytes (tmpfs counts whole 4 KiB pages).
FREE = [0, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1 << 20, 2 << 20, 4 << 20,
        8 << 20]
UNCLEAR = re.compile(r"Input/output error|Device or resource busy|basic_ios|std::|"
                     r"_M_|what\(\)|Segmentation|core dumped|Aborted|HDF5-DIAG")


class SmallDisk:
    """A tmpfs of `size` bytes mounted on a new folder; fill() leaves `free` bytes."""

    def __init__(self, size, work):
        self.path = tempfile.mkdtemp(prefix="disk-", dir=work)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", self.path],
                       check=True)
        self.filler = os.path.join(self.path, ".filler")

    def fill(self, free):
        with open(self.filler, "wb", buffering=0) as handle:
            block = b"x" * 65536
            try:
                while True:
                    handle.write(block)
            except OSError:
                pass
        size = os.path.getsize(self.filler)
        os.truncate(self.filler, max(0, size - ((free + 4095) // 4096) * 4096))

    def empty(self):
        if os.path.exists(self.filler):
            os.remove(self.filler)

    def close(self):
        subprocess.run(["umount", "-l", self.path], check=False)
        shutil.rmtree(self.path, ignore_errors=True)


def without_temps(files):
    return {path: value for path, value in files.items() if not TEMP_NAME.search(path)}


class Campaign(Labpose):
    def __init__(self, args, work):
        super().__init__(args.labpose, work)
        self.failures = []
        self.env = dict(os.environ, OMP_NUM_THREADS="1")

    def sweep(self, scenario, project, arguments, disk, additive=False):
        """Runs `arguments` with the disk filled to each amount of FREE; `project` is on `disk`.
        `additive`: the command adds new files each time it runs (extract-frames adds frames it
        has not picked yet), so a run after a partial one adds other, whole files."""
        disk.empty()
        pristine = os.path.join(self.work, scenario.replace(" ", "-") + ".pristine")
        shutil.copytree(project, pristine, symlinks=True, copy_function=shutil.copy2)
        old = digest_tree(project)
        self.run(*arguments, env=self.env)
        new = without_temps(digest_tree(project))
        runs = failed = clear = crashes = torn = bad_rerun = 0
        for free in FREE:
            restore(pristine, project)
            disk.fill(free)
            runs += 1
            result = self.run(*arguments, check=False, env=self.env)
            output = result.stdout + result.stderr
            if result.returncode not in (0, 1):
                crashes += 1
                self.failures.append(f"{scenario}: exit {result.returncode} with {free} bytes free:"
                                     f" {output[-400:]}")
            if result.returncode != 0:
                failed += 1
                if "no space left on " in output and not UNCLEAR.search(output):
                    clear += 1
                else:
                    self.failures.append(f"{scenario}: unclear message with {free} bytes free: "
                                         f"{output[-400:]}")
            after = without_temps(digest_tree(project))
            for path, value in after.items():
                if path.endswith(".filler"):
                    continue
                if value in (old.get(path), new.get(path)) or is_log_prefix(value, new.get(path)):
                    continue
                if additive and path not in old and whole_png(os.path.join(project, path)):
                    continue
                if path.endswith(".labpose-checkpoint"):
                    continue  # analyze's rows so far, for the next run to resume from
                if path.endswith(".safetensors") and whole_snapshot(os.path.join(project, path)):
                    continue  # a snapshot of an iteration before the disk filled
                torn += 1
                self.failures.append(f"{scenario}: {path} is neither old nor new with {free} "
                                     f"bytes free")
            disk.empty()
            rerun = self.run(*arguments, check=False, env=self.env)
            final = digest_tree(project)
            if additive:  # the old files kept, every added one whole
                differ = sorted(p for p in without_temps(final) if p in old and final[p] != old[p]
                                or p not in old and not whole_png(os.path.join(project, p)))
            else:
                differ = sorted(p for p in set(without_temps(final)) | set(new)
                                if without_temps(final).get(p) != new.get(p))
            if rerun.returncode != 0 or differ or temp_files(final):
                bad_rerun += 1
                self.failures.append(f"{scenario}: after freeing space (had {free} bytes): exit "
                                     f"{rerun.returncode}, differ {differ[:4]}, temp files "
                                     f"{temp_files(final)[:4]}: {rerun.stdout}{rerun.stderr}")
        restore(pristine, project)
        print(f"{scenario:18} {runs:3} runs, {failed:3} out of space ({clear} with the clear "
              f"message), {crashes} crashes, {torn} torn files, {bad_rerun} failed reruns",
              flush=True)

    def project_on(self, disk, name, frames=60, labeled=10):
        return self.demo_project(name, frames, labeled, parent=disk.path)

    def scenarios(self, names):
        disk = SmallDisk(64 << 20, self.work)
        try:
            for name in names:
                disk.empty()
                getattr(self, name)(disk)
                for entry in os.listdir(disk.path):
                    if entry != ".filler":
                        shutil.rmtree(os.path.join(disk.path, entry), ignore_errors=True)
        finally:
            disk.close()

    def add_videos(self, disk):
        config = self.project_on(disk, "add")
        video = os.path.join(self.work, "extra.mp4")
        shutil.copy(os.path.join(os.path.dirname(config), "videos", "synthetic_mouse.mp4"), video)
        self.sweep("add-videos --copy", os.path.dirname(config),
                   ["add-videos", config, video, "--copy-videos"], disk)

    def extract_frames(self, disk):
        config = self.project_on(disk, "extract", frames=200)
        self.sweep("extract-frames", os.path.dirname(config),
                   ["extract-frames", config, "--algo", "uniform", "--num", "20", "--seed", "7"],
                   disk, additive=True)

    def convert(self, disk):
        config = self.project_on(disk, "convert")
        folder = os.path.join(os.path.dirname(config), "labeled-data", "synthetic_mouse")
        for name in os.listdir(folder):
            if name.endswith(".h5"):
                os.remove(os.path.join(folder, name))
        self.sweep("convert-labels", os.path.dirname(config),
                   ["convert-labels", config, "--to", "h5"], disk)

    def create_dataset(self, disk):
        config = self.project_on(disk, "dataset", frames=200, labeled=60)
        self.sweep("create-dataset", os.path.dirname(config),
                   ["create-dataset", config, "--net", "mobilenet_v2_0.35", "--shuffle", "1",
                    "--weights", "none"], disk)

    def train(self, disk):
        config = self.project_on(disk, "train")
        self.run("create-dataset", config, "--net", "mobilenet_v2_0.35", "--weights", "none")
        self.train_config(config, save_iters=5, display_iters=1, evaluate_iters=5, batch_size=2,
                          crop_size="[64, 64]")
        self.sweep("train", os.path.dirname(config),
                   ["train", config, "--max-iters", "10", "--device", "cpu"], disk)

    def analyze(self, disk):
        config = self.project_on(disk, "analyze", frames=40)
        self.run("create-dataset", config, "--net", "mobilenet_v2_0.35", "--weights", "none")
        self.train_config(config, batch_size=2, crop_size="[64, 64]")
        self.run("train", config, "--max-iters", "2", "--device", "cpu", env=self.env)
        project = os.path.dirname(config)
        self.sweep("analyze", project,
                   ["analyze", config, os.path.join(project, "videos", "synthetic_mouse.mp4"),
                    "--csv", "--batch-size", "4"], disk)
        self.run("analyze", config, os.path.join(project, "videos", "synthetic_mouse.mp4"),
                 env=self.env)
        self.sweep("evaluate", project, ["evaluate", config, "--device", "cpu"], disk)
        self.sweep("filter", project,
                   ["filter", config, os.path.join(project, "videos", "synthetic_mouse.mp4")], disk)

    def label(self, disk):
        """Saves into a full disk while `labpose label` runs, then with room again."""
        config = self.project_on(disk, "label")
        folder = os.path.join(os.path.dirname(config), "labeled-data", "synthetic_mouse")
        image = sorted(n for n in os.listdir(folder) if n.endswith(".png"))[0]
        before = {name: open(os.path.join(folder, name), "rb").read()
                  for name in os.listdir(folder) if name.startswith("CollectedData_")}
        refused = clear = saved_after = broken_backups = crashes = 0
        for round_index, free in enumerate(FREE[:8]):
            server = subprocess.Popen([self.binary, "label", config, "--no-browser"],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            base, token = re.match(r"(http://[^/]+)/\?token=(\w+)",
                                   server.stdout.readline().strip()).groups()

            def save(x):
                body = json.dumps({"video": "synthetic_mouse", "image": image,
                                   "bodypart": "snout", "x": x, "y": 12.5}).encode()
                request = urllib.request.Request(
                    base + "/api/point", data=body, method="POST",
                    headers={"Content-Type": "application/json", "X-Labpose-Token": token})
                try:
                    with urllib.request.urlopen(request, timeout=60) as answer:
                        return answer.status, answer.read().decode()
                except urllib.error.HTTPError as error:
                    return error.code, error.read().decode()

            disk.fill(free)
            status, message = save(10.0 + round_index)
            if status != 200:
                refused += 1
                clear += "no space left on " in message and not UNCLEAR.search(message)
                if "no space left on " not in message:
                    self.failures.append(f"label: save refused without the reason: {message}")
            disk.empty()
            status, message = save(20.0 + round_index)
            saved_after += status == 200
            if status != 200:
                self.failures.append(f"label: save after freeing space failed: {status} {message}")
            server.terminate()
            if server.wait() not in (0, -15):
                crashes += 1
            backups = os.path.join(folder, ".labpose-backups")
            for stamp in os.listdir(backups) if os.path.isdir(backups) else []:
                path = os.path.join(backups, stamp)
                if not os.path.isdir(path):
                    continue
                for name, content in before.items():
                    copy = os.path.join(path, name)
                    if os.path.exists(copy) and open(copy, "rb").read() != content:
                        broken_backups += 1
                        self.failures.append(f"label: backup {stamp}/{name} is not the file "
                                             "as it was before the session")
            shutil.rmtree(backups, ignore_errors=True)
            for name, content in before.items():
                with open(os.path.join(folder, name), "wb") as handle:
                    handle.write(content)
        print(f"{'label saves':18} {len(FREE[:8]):3} sessions, {refused:3} saves refused "
              f"({clear} with the clear message), {saved_after} saved once space was freed, "
              f"{broken_backups} broken backups, {crashes} crashes", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labpose", default="build/tools/labpose")
    parser.add_argument("--scenarios",
                        default="add_videos,extract_frames,convert,create_dataset,train,analyze,"
                                "label")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("disk_full.py mounts small file systems: run it as root")
    with tempfile.TemporaryDirectory(prefix="labpose-disk-full-") as work:
        campaign = Campaign(args, work)
        campaign.scenarios(args.scenarios.split(","))
    for failure in campaign.failures[:30]:
        print("FAILED:", failure)
    sys.exit(1 if campaign.failures else 0)


if __name__ == "__main__":
    main()

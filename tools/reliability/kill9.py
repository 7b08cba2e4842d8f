#!/usr/bin/env python3
"""kill -9 campaigns: labpose killed at random moments while it writes, then checked.

Each scenario starts from the same project state, runs one labpose command, kills it with SIGKILL
after a random delay (up to a little longer than the command takes), then checks what a user would
find: every file is either the version from before or the one the finished command writes (never a
torn or half-written one), the command run again finishes and leaves the files a run that was never
killed leaves, and no temp file stays behind. The labeling scenario sends point edits to a running
`labpose label` and checks that every edit the server acknowledged is in both label files after the
kill. Prints one line per scenario; exits 1 if any round broke a promise.

Not a test (it takes minutes and its figures go to README's reliability section): run it by hand,
  /usr/bin/python3 tools/reliability/kill9.py --labpose build/tools/labpose --rounds 100
Needs pandas and PyTables (tools/install-deps.sh --tests).
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import pandas as pd

from project_state import Labpose, TEMP_NAME, digest_tree, image_of, restore, temp_files

class Campaign(Labpose):
    def __init__(self, args, work):
        super().__init__(args.labpose, work)
        self.labpose = self.binary
        self.rounds = args.rounds
        self.random = random.Random(args.seed)
        self.failures = []

    def timed(self, arguments, env=None):
        start = time.monotonic()
        self.run(*arguments, env=env)
        return time.monotonic() - start

    def kill_after(self, arguments, delay, env=None):
        process = subprocess.Popen([self.labpose, "--quiet", *arguments], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, env=env)
        try:
            process.wait(timeout=delay)
            return False  # finished before the kill
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return True

    def files_old_or_new(self, scenario, arguments, project, env=None, prepare=None):
        """The scenario's rounds; `prepare(project)` makes the state before the command."""
        if prepare:
            prepare(project)
        pristine = project + ".pristine"
        shutil.copytree(project, pristine, symlinks=True, copy_function=shutil.copy2)
        old = digest_tree(project)
        duration = self.timed(arguments, env)
        new = digest_tree(project)
        changed = sorted(path for path in set(old) | set(new) if old.get(path) != new.get(path))
        if not changed:
            raise RuntimeError(f"{scenario}: the command changed nothing; the campaign tests nothing")
        killed = torn = leftover = bad_rerun = 0
        for _ in range(self.rounds):
            restore(pristine, project)
            if self.kill_after(arguments, self.random.uniform(0, duration * 1.1), env):
                killed += 1
            after = digest_tree(project)
            for path in after:
                if TEMP_NAME.search(os.path.basename(path)):
                    continue
                if after[path] not in (old.get(path), new.get(path)):
                    torn += 1
                    self.failures.append(f"{scenario}: {path} is neither the old nor the new file")
            leftover_before = temp_files(after)
            rerun = self.run(*arguments, check=False, env=env)
            final = digest_tree(project)
            differ = sorted(path for path in set(final) | set(new)
                            if not TEMP_NAME.search(os.path.basename(path))
                            and final.get(path) != new.get(path))
            if rerun.returncode != 0 or differ:
                bad_rerun += 1
                self.failures.append(f"{scenario}: the run after the kill did not give the "
                                     f"finished files (exit {rerun.returncode}; differ: "
                                     f"{differ[:5]}): {rerun.stdout}{rerun.stderr}")
            if temp_files(final):
                leftover += 1
                self.failures.append(f"{scenario}: temp files stayed after the next run: "
                                     f"{temp_files(final)} (before it: {leftover_before})")
        restore(pristine, project)
        print(f"{scenario:16} {self.rounds:4} rounds, {killed:4} killed mid-run "
              f"(run {duration:.2f} s, {len(changed)} files written): "
              f"{torn} torn files, {bad_rerun} reruns that differ, {leftover} with temp files left",
              flush=True)

    # --- scenarios ---------------------------------------------------------------------------

    def convert(self):
        config = self.demo_project("convert")
        project = os.path.dirname(config)
        labeled = os.path.join(project, "labeled-data")

        def prepare(_):
            # 30 folders of labels whose CSV is newer than their .h5 (every .h5 is rewritten).
            source = os.path.join(labeled, "synthetic_mouse")
            csv = next(f for f in os.listdir(source) if f.endswith(".csv"))
            text = open(os.path.join(source, csv)).read()
            for index in range(30):
                folder = os.path.join(labeled, f"session{index:02d}")
                os.makedirs(folder)
                edited = text.replace("labeled-data/synthetic_mouse/",
                                      f"labeled-data/session{index:02d}/")
                edited = re.sub(r"(\n[^,\n]+,)([0-9.]+)", lambda m: m.group(1) + str(index + 1.5),
                                edited, count=1)
                with open(os.path.join(folder, csv), "w") as handle:
                    handle.write(edited)
        self.files_old_or_new("convert-labels", ["convert-labels", config, "--to", "h5"], project,
                              prepare=prepare)

    def create_dataset(self):
        config = self.demo_project("dataset", frames=200, labeled=60)
        self.files_old_or_new("create-dataset",
                              ["create-dataset", config, "--net", "mobilenet_v2_0.35",
                               "--shuffle", "1", "--weights", "none"], os.path.dirname(config))

    def train(self):
        """Killed while training; --resume must continue from whole snapshots."""
        config = self.demo_project("train")
        project = os.path.dirname(config)
        self.run("create-dataset", config, "--net", "mobilenet_v2_0.35", "--weights", "none")
        pose = self.train_config(config, save_iters=4, display_iters=1, evaluate_iters=0,
                                 batch_size=2, crop_size="[64, 64]")
        pristine = project + ".pristine"
        shutil.copytree(project, pristine, symlinks=True, copy_function=shutil.copy2)
        env = dict(os.environ, OMP_NUM_THREADS="1")
        arguments = ["train", config, "--max-iters", "40", "--device", "cpu"]
        duration = self.timed(arguments, env)
        killed = bad = leftover = 0
        for _ in range(self.rounds):
            restore(pristine, project)
            if self.kill_after(arguments, self.random.uniform(0, duration * 1.1), env):
                killed += 1
            train_dir = os.path.dirname(pose)
            finished = "snapshot-40.safetensors" in os.listdir(train_dir)  # killed while ending
            resumed = (subprocess.CompletedProcess([], 0, "", "") if finished else
                       self.run(*arguments, "--resume", check=False, env=env))
            names = os.listdir(train_dir)
            if resumed.returncode != 0 and not any(n.startswith("snapshot-") for n in names):
                # Killed before the first snapshot: nothing to resume; a fresh start must work.
                resumed = self.run(*arguments, check=False, env=env)
                names = os.listdir(train_dir)
            if resumed.returncode != 0 or "snapshot-40.safetensors" not in names:
                bad += 1
                self.failures.append(f"train: resume after kill failed (exit {resumed.returncode}):"
                                     f" {resumed.stdout}{resumed.stderr}")
            else:
                stats = pd.read_csv(os.path.join(train_dir, "learning_stats.csv"))
                if stats["iteration"].max() != 40:
                    bad += 1
                    self.failures.append("train: learning_stats.csv does not reach iteration 40")
            if temp_files(digest_tree(project)):
                leftover += 1
                self.failures.append(f"train: temp files left: {temp_files(digest_tree(project))}")
        restore(pristine, project)
        print(f"{'train':16} {self.rounds:4} rounds, {killed:4} killed mid-run "
              f"(run {duration:.2f} s): {bad} resumes that failed, {leftover} with temp files left",
              flush=True)

    def analyze(self):
        """Killed while analyzing; the rerun resumes to the table an uninterrupted run writes."""
        config = self.demo_project("analyze", frames=300)
        project = os.path.dirname(config)
        self.run("create-dataset", config, "--net", "mobilenet_v2_0.35", "--weights", "none")
        env = dict(os.environ, OMP_NUM_THREADS="1")
        self.run("train", config, "--max-iters", "2", "--device", "cpu", env=env)
        video = os.path.join(project, "videos", "synthetic_mouse.mp4")
        dest = os.path.join(project, "out")
        arguments = ["analyze", config, video, "--dest", dest, "--csv", "--batch-size", "4",
                     "--threads", "1"]
        duration = self.timed(arguments, env)
        reference = {name: (pd.read_hdf(os.path.join(dest, name)) if name.endswith(".h5") else
                            pd.read_csv(os.path.join(dest, name), header=[0, 1, 2], index_col=0))
                     for name in os.listdir(dest) if name.endswith((".h5", ".csv"))}
        killed = bad = leftover = 0
        for _ in range(self.rounds):
            shutil.rmtree(dest)
            if self.kill_after(arguments, self.random.uniform(0, duration * 1.1), env):
                killed += 1
            rerun = self.run(*arguments, check=False, env=env)
            same = rerun.returncode == 0
            for name, table in reference.items():
                path = os.path.join(dest, name)
                if not same or not os.path.exists(path):
                    same = False
                    break
                again = (pd.read_hdf(path) if name.endswith(".h5") else
                         pd.read_csv(path, header=[0, 1, 2], index_col=0))
                same = same and again.equals(table)
            if not same:
                bad += 1
                self.failures.append(f"analyze: the resumed run differs (exit {rerun.returncode}):"
                                     f" {rerun.stdout}{rerun.stderr}")
            if temp_files(digest_tree(dest)):
                leftover += 1
                self.failures.append(f"analyze: temp files left: {temp_files(digest_tree(dest))}")
        print(f"{'analyze':16} {self.rounds:4} rounds, {killed:4} killed mid-run "
              f"(run {duration:.2f} s): {bad} resumed tables that differ, {leftover} with temp "
              f"files left", flush=True)

    def label(self):
        """Point edits to `labpose label`, killed at random; acknowledged edits must survive."""
        config = self.demo_project("label")
        project = os.path.dirname(config)
        folder = os.path.join(project, "labeled-data", "synthetic_mouse")
        images = sorted(n for n in os.listdir(folder) if n.endswith(".png"))
        bodyparts = ["snout", "leftear", "rightear", "tailbase"]
        lost = unreadable = acknowledged_total = killed = 0
        for round_index in range(self.rounds):
            process = subprocess.Popen([self.labpose, "label", config, "--no-browser"],
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            url = process.stdout.readline().strip()
            match = re.match(r"(http://[^/]+)/\?token=(\w+)", url)
            if not match:
                process.kill()
                raise RuntimeError(f"label printed no URL: {url!r}")
            base, token = match.groups()
            deadline = self.random.uniform(0.05, 1.5)
            start = time.monotonic()
            acknowledged = {}
            edit = 0
            while time.monotonic() - start < deadline:
                image = images[edit % len(images)]
                bodypart = bodyparts[(edit // len(images)) % len(bodyparts)]
                x, y = 10.0 + round_index + edit * 0.25, 20.0 + edit * 0.5
                body = json.dumps({"video": "synthetic_mouse", "image": image,
                                   "bodypart": bodypart, "x": x, "y": y}).encode()
                request = urllib.request.Request(base + "/api/point", data=body, method="POST",
                                                 headers={"Content-Type": "application/json",
                                                          "X-Labpose-Token": token})
                try:
                    with urllib.request.urlopen(request, timeout=30) as answer:
                        if answer.status == 200:
                            acknowledged[(image, bodypart)] = (x, y)
                except (urllib.error.URLError, ConnectionError):
                    break
                edit += 1
            process.send_signal(signal.SIGKILL)
            process.wait()
            killed += 1
            acknowledged_total += len(acknowledged)
            tables = []
            for name in ("CollectedData_labpose.csv", "CollectedData_labpose.h5"):
                path = os.path.join(folder, name)
                try:
                    tables.append(pd.read_hdf(path) if name.endswith(".h5") else
                                  pd.read_csv(path, header=[0, 1, 2], index_col=[0, 1, 2]))
                except Exception as error:  # noqa: BLE001 - any failure to read is the finding
                    unreadable += 1
                    self.failures.append(f"label: {name} unreadable after the kill: {error}")
            for table in tables:
                for (image, bodypart), (x, y) in acknowledged.items():
                    scorer = table.columns.get_level_values(0)[0]
                    row = table.loc[[key for key in table.index if image_of(key) == image][0]]
                    value = (row[(scorer, bodypart, "x")], row[(scorer, bodypart, "y")])
                    if abs(value[0] - x) > 1e-9 or abs(value[1] - y) > 1e-9:
                        lost += 1
                        self.failures.append(f"label: acknowledged edit {image} {bodypart} "
                                             f"({x}, {y}) lost: found {value}")
        print(f"{'label saves':16} {self.rounds:4} rounds, {killed:4} kills, {acknowledged_total} "
              f"acknowledged edits: {lost} lost, {unreadable} unreadable files", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labpose", default="build/tools/labpose")
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scenarios", default="convert,create_dataset,label,train,analyze")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="labpose-kill9-") as work:
        campaign = Campaign(args, work)
        for scenario in args.scenarios.split(","):
            getattr(campaign, scenario)()
    for failure in campaign.failures[:20]:
        print("FAILED:", failure)
    sys.exit(1 if campaign.failures else 0)


if __name__ == "__main__":
    main()

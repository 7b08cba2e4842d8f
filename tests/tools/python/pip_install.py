"""`pip install .` into a clean virtualenv (made once under the build folder and reused): the wheel
builds from the checkout (reusing the configured build folder), installs with numpy from PyPI, and
the installed package, not the in-place one, runs a command. Skips (status 77) where PyPI cannot be
reached, unless LABPOSE_REQUIRE_INTEROP_PYTHON=1."""
import os
import subprocess
import sys
import tempfile

from requirements import missing

source = os.environ["LABPOSE_SOURCE_DIR"]
build = os.environ["LABPOSE_BUILD_DIR"]
venv = os.path.join(build, "test-venv-python-package")
python = os.path.join(venv, "bin", "python")


def run(*command, **options):
    print("$ " + " ".join(command), flush=True)
    return subprocess.run(command, **options)


if not os.path.exists(python):
    run(sys.executable, "-m", "venv", venv, check=True)
installed = run(python, "-c", "import numpy", capture_output=True).returncode == 0
pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
if not installed:
    if run(*pip, "numpy").returncode != 0:
        missing("numpy from PyPI", f"PyPI could not be reached to install it into {venv}")
run(*pip, "--force-reinstall", "--no-deps", source, "--config-settings", f"build-dir={build}",
    check=True, env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"})
check = """
import os, sys, labpose
assert labpose.__file__.startswith(sys.prefix), labpose.__file__
video = os.path.join(sys.argv[1], "clip.mp4")
try:
    labpose.create_new_project("mice", "pip", [video], working_directory=sys.argv[1])
except labpose.Error as error:
    assert "clip.mp4" in str(error) and error.hint, error
    print("installed package ok:", labpose.__file__, labpose.__version__)
"""
with tempfile.TemporaryDirectory() as folder:
    run(python, "-c", check, folder, check=True, cwd=folder,
        env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"})

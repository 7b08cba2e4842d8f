"""Fixtures of the Python package's suite: the labpose program (to make the demo project and to
compare with) and a synthetic project trained once through the Python functions."""
import os
import shutil
import subprocess

import pytest

BINARY = os.environ.get("LABPOSE_BINARY", "labpose")


def cli(*arguments):
    """Runs the labpose program; returns its stdout. Fails the test with its output on error."""
    done = subprocess.run([BINARY, *map(str, arguments)], capture_output=True, text=True)
    assert done.returncode == 0, f"labpose {' '.join(map(str, arguments))}:\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="session")
def demo_project(tmp_path_factory):
    """A labeled synthetic project (the demo's mouse: 90 frames, 24 labeled), untouched."""
    folder = tmp_path_factory.mktemp("demo")
    config = cli("demo", "--project-only", "--dir", folder, "--frames", 90,
                 "--labeled-frames", 24).strip().splitlines()[-1]
    return config


def copy_project(config, destination):
    """A copy of the project of `config` in `destination`; returns its config.yaml."""
    source = os.path.dirname(config)
    target = os.path.join(destination, os.path.basename(source))
    shutil.copytree(source, target, symlinks=True)
    return os.path.join(target, "config.yaml")


@pytest.fixture(scope="session")
def trained_project(demo_project, tmp_path_factory):
    """A copy of the demo project with shuffle 1 (mobilenet_v2_0.35) trained 120 iterations through
    labpose.create_training_dataset and labpose.train_network."""
    import labpose

    config = copy_project(demo_project, tmp_path_factory.mktemp("trained"))
    labpose.create_training_dataset(config, Shuffles=[1], net_type="mobilenet_v2_0.35",
                                    weight_init="none")
    labpose.train_network(config, shuffle=1, maxiters=120, saveiters=60, displayiters=30,
                          device="cpu", batch_size=4)
    return config

"""Reads a config.yaml the way DeepLabCut 3 does (ruamel.yaml, safe loader, YAML 1.2) and prints
the values the C++ tests compare. Usage: read_config.py CONFIG"""
import sys

from ruamel.yaml import YAML

with open(sys.argv[1]) as handle:
    config = YAML(typ="safe", pure=True).load(handle)
for key in ("Task", "scorer", "date", "bodyparts", "TrainingFraction", "corner2move2", "identity", "pcutoff"):
    print(f"{key}={config[key]!r}" if not isinstance(config[key], str) else f"{key}={config[key]}")
for video, settings in config["video_sets"].items():
    print(f"video={video} crop={settings['crop']}")

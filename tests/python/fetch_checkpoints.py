"""Writes the checkpoints the `labpose weights fetch` test serves from its loopback server: a
torchvision mobilenet_v2 (width 1.0, random weights) saved by torch.save as torchvision publishes
its ImageNet checkpoint, and a hostile one whose pickle would run a shell command (touching
OUT_DIR/pwned) when loaded by torch.load. Usage: fetch_checkpoints.py OUT_DIR"""
import os
import sys

import torch
import torchvision

out = sys.argv[1]
torch.manual_seed(5)
torch.save(torchvision.models.mobilenet_v2().state_dict(), os.path.join(out, "mobilenet_v2.pth"))


class Hostile:
    """Unpickling this calls os.system: what a restricted unpickler must refuse."""

    def __reduce__(self):
        return (os.system, ("touch " + os.path.join(out, "pwned"),))


torch.save({"features.0.0.weight": Hostile()}, os.path.join(out, "hostile.pth"))

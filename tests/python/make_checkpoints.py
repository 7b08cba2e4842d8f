"""Writes ImageNet-style checkpoints for the converter test: a torchvision resnet_50 state_dict
wrapped as {"state_dict": ...} with DataParallel's "module." prefix, and a mobilenet_v2_0.35 saved
under timm's names; plus the same weights under labpose's names (reference.safetensors) via
tools/torch_reference.py. Usage: make_checkpoints.py TOOLS_DIR OUT_DIR"""
import os
import re
import sys

import torch
import torchvision

sys.path.insert(0, sys.argv[1])
import torch_reference  # noqa: E402

out = sys.argv[2]
torch.manual_seed(3)
resnet = torchvision.models.resnet50()
torch.save({"epoch": 90, "state_dict": {"module." + k: v for k, v in resnet.state_dict().items()}},
           os.path.join(out, "resnet50.pth"))
torch_reference.write_safetensors({k: v for k, v in resnet.state_dict().items()
                                   if not k.endswith("num_batches_tracked") and not k.startswith("fc.")},
                                  os.path.join(out, "resnet50_reference.safetensors"))

mobile = torchvision.models.mobilenet_v2(width_mult=0.35)
with torch.no_grad():
    for tensor in mobile.state_dict().values():
        if tensor.is_floating_point():
            tensor.uniform_(-1, 1)
stage_of = {}
index = 1
for stage, count in enumerate([1, 2, 3, 4, 3, 3, 1]):
    for block in range(count):
        stage_of[index] = (stage, block)
        index += 1
timm = {}
for name, value in mobile.state_dict().items():
    match = re.match(r"features\.(\d+)\.(.+)", name)
    if not match:
        timm[name] = value  # classifier.*
        continue
    feature, rest = int(match[1]), match[2]
    if feature == 0:
        timm[("conv_stem." if rest.startswith("0.") else "bn1.") + rest[2:]] = value
    elif feature == 18:
        timm[("conv_head." if rest.startswith("0.") else "bn2.") + rest[2:]] = value
    else:
        stage, block = stage_of[feature]
        parts = ({"conv.0.0": "conv_dw", "conv.0.1": "bn1", "conv.1": "conv_pw", "conv.2": "bn2"} if stage == 0 else
                 {"conv.0.0": "conv_pw", "conv.0.1": "bn1", "conv.1.0": "conv_dw", "conv.1.1": "bn2",
                  "conv.2": "conv_pwl", "conv.3": "bn3"})
        for prefix, part in parts.items():
            if rest.startswith(prefix + "."):
                timm[f"blocks.{stage}.{block}.{part}.{rest[len(prefix) + 1:]}"] = value
                break
torch.save(timm, os.path.join(out, "mobilenetv2_035_timm.pth"))
torch_reference.write_safetensors({k: v for k, v in mobile.state_dict().items()
                                   if not k.endswith("num_batches_tracked") and not k.startswith("classifier.")},
                                  os.path.join(out, "mobilenet_reference.safetensors"))

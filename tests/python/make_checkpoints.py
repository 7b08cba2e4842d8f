"""Writes ImageNet-style checkpoints for the converter test: a torchvision resnet_50 state_dict
wrapped as {"state_dict": ...} with DataParallel's "module." prefix, and a mobilenet_v2_0.35 saved
under timm's names; plus the same weights under labpose's names (reference.safetensors) via
tools/torch_reference.py. Usage: make_checkpoints.py TOOLS_DIR OUT_DIR"""
import os
import sys

import torch
import torchvision

sys.path.insert(0, sys.argv[1])
import torch_reference  # noqa: E402
import timm_names  # noqa: E402

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
timm = timm_names.mobilenet_v2_to_timm(mobile.state_dict())
torch.save(timm, os.path.join(out, "mobilenetv2_035_timm.pth"))
torch_reference.write_safetensors({k: v for k, v in mobile.state_dict().items()
                                   if not k.endswith("num_batches_tracked") and not k.startswith("classifier.")},
                                  os.path.join(out, "mobilenet_reference.safetensors"))

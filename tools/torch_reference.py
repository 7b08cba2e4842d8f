#!/usr/bin/python3
"""Reference outputs of labpose's pose networks from PyTorch (Debian's python3-torch + torchvision).

Builds the same network as labpose (torchvision ResNet-50/101 with the last stage dilated, or
MobileNetV2 1.0/0.35 made output-stride 16 as in DeepLabCut, plus the transposed-convolution head),
fills it with random weights and batch-norm statistics from --seed, and writes into --out:

  weights.safetensors   every parameter under labpose's (torchvision's) names
  input.npy             (N, 3, H, W) float32 RGB 0-255
  scoremap.npy          (N, J, H/8, W/8) logits, eval mode
  locref.npy            (N, 2J, H/8, W/8)

With --train it also runs one training-mode forward and backward of
loss = sum(scoremap * R0) + sum(locref * R1) and writes r0.npy, r1.npy, train_scoremap.npy,
train_locref.npy, gradients.safetensors (d loss / d parameter) and
running_statistics.safetensors (batch-norm statistics after that forward).

Usage: torch_reference.py --arch resnet_50 --bodyparts 4 --size 64x48 --batch 2 --seed 0 --out DIR
"""
import argparse
import json
import os
import struct

import numpy as np
import torch
import torch.nn as nn
import torchvision

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


class PoseNet(nn.Module):
    """Attribute names give state_dict keys equal to labpose's parameter names."""

    def __init__(self, arch, bodyparts):
        super().__init__()
        self.arch = arch
        if arch in ("resnet_50", "resnet_101"):
            build = torchvision.models.resnet50 if arch == "resnet_50" else torchvision.models.resnet101
            net = build(weights=None, replace_stride_with_dilation=[False, False, True])
            for name in ("conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4"):
                setattr(self, name, getattr(net, name))
            channels = 2048
        else:
            width = 1.0 if arch == "mobilenet_v2_1.0" else 0.35
            self.features = torchvision.models.mobilenet_v2(weights=None, width_mult=width).features
            for index, block in enumerate(self.features):  # output stride 16, as DeepLabCut
                for module in block.modules():
                    if isinstance(module, nn.Conv2d) and module.kernel_size == (3, 3) and index >= 14:
                        if index == 14 and module.stride == (2, 2):
                            module.stride = (1, 1)
                        module.dilation = (2, 2)
                        module.padding = (2, 2)
            channels = self.features[-1][0].out_channels
        self.head = nn.Module()
        self.head.score = nn.ConvTranspose2d(channels, bodyparts, 3, stride=2, padding=1, output_padding=1)
        self.head.locref = nn.ConvTranspose2d(channels, 2 * bodyparts, 3, stride=2, padding=1, output_padding=1)
        self.register_buffer("mean", torch.tensor(MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(STD).view(1, 3, 1, 1), persistent=False)

    def forward(self, images):
        x = (images - self.mean) / self.std
        if self.arch.startswith("resnet"):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        else:
            x = self.features(x)
        return self.head.score(x), self.head.locref(x)


def randomize(model, seed):
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if not tensor.is_floating_point():
                continue
            if name.endswith("running_var") or (name.endswith(".weight") and tensor.dim() == 1):
                tensor.copy_(0.5 + torch.rand(tensor.shape, generator=generator))
            elif name.endswith("running_mean") or tensor.dim() == 1:
                tensor.copy_(0.2 * (torch.rand(tensor.shape, generator=generator) - 0.5))
            else:
                fan_out = tensor.shape[0] * tensor.shape[2] * tensor.shape[3]
                if name.startswith("head."):
                    fan_out = tensor.shape[1] * tensor.shape[2] * tensor.shape[3]
                tensor.copy_(torch.randn(tensor.shape, generator=generator) * (2.0 / fan_out) ** 0.5)


def write_safetensors(tensors, path):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name].detach().cpu().numpy().astype("<f4")).tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as handle:
        handle.write(struct.pack("<Q", len(text)))
        handle.write(text)
        for blob in blobs:
            handle.write(blob)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", required=True, choices=["resnet_50", "resnet_101", "mobilenet_v2_1.0", "mobilenet_v2_0.35"])
    parser.add_argument("--bodyparts", type=int, default=4)
    parser.add_argument("--size", default="64x48", help="W x H")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--frozen-batch-norm", action="store_true")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)

    model = PoseNet(args.arch, args.bodyparts)
    randomize(model, args.seed)
    parameters = {k: v for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}
    write_safetensors(parameters, os.path.join(args.out, "weights.safetensors"))
    generator = torch.Generator().manual_seed(args.seed + 1)
    images = 255.0 * torch.rand(args.batch, 3, height, width, generator=generator)
    np.save(os.path.join(args.out, "input.npy"), images.numpy().astype(np.float32))

    model.eval()
    with torch.no_grad():
        scoremap, locref = model(images)
    np.save(os.path.join(args.out, "scoremap.npy"), scoremap.numpy())
    np.save(os.path.join(args.out, "locref.npy"), locref.numpy())

    if args.train:
        model.train()
        if args.frozen_batch_norm:
            for module in model.modules():
                if isinstance(module, nn.BatchNorm2d):
                    module.eval()
        scoremap, locref = model(images)
        r0 = torch.rand(scoremap.shape, generator=generator) - 0.5
        r1 = torch.rand(locref.shape, generator=generator) - 0.5
        loss = (scoremap * r0).sum() + (locref * r1).sum()
        loss.backward()
        np.save(os.path.join(args.out, "r0.npy"), r0.numpy())
        np.save(os.path.join(args.out, "r1.npy"), r1.numpy())
        np.save(os.path.join(args.out, "train_scoremap.npy"), scoremap.detach().numpy())
        np.save(os.path.join(args.out, "train_locref.npy"), locref.detach().numpy())
        write_safetensors({n: p.grad for n, p in model.named_parameters()}, os.path.join(args.out, "gradients.safetensors"))
        statistics = {k: v for k, v in model.state_dict().items() if k.endswith(("running_mean", "running_var"))}
        write_safetensors(statistics, os.path.join(args.out, "running_statistics.safetensors"))


if __name__ == "__main__":
    main()

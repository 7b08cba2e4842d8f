#!/usr/bin/python3
"""Reference outputs of labpose's pose networks from PyTorch (Debian's python3-torch + torchvision).

Builds the same network as labpose (torchvision ResNet-50/101 with the last stage dilated,
MobileNetV2 1.0/0.35 made output-stride 16 as in DeepLabCut, or EfficientNet-Lite0-4 under
efficientnet_lite_pytorch's names with TensorFlow's "same" padding and the last stride-2 group dilated,
plus the transposed-convolution head),
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
import math
import os
import struct

import numpy as np
import torch
import torch.nn as nn
import torchvision

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
ARCHITECTURES = ["resnet_50", "resnet_101", "mobilenet_v2_1.0", "mobilenet_v2_0.35"] + [
    f"efficientnet_lite{n}" for n in range(5)]

# EfficientNet-Lite (efficientnet_lite_pytorch's efficientnet_params and block strings): (width, depth)
# per variant, and per group of MBConv blocks (repeats, kernel, stride, expansion, in, out).
LITE_SCALING = [(1.0, 1.0), (1.0, 1.1), (1.1, 1.2), (1.2, 1.4), (1.4, 1.8)]
LITE_GROUPS = [(1, 3, 1, 1, 32, 16), (2, 3, 2, 6, 16, 24), (2, 5, 2, 6, 24, 40), (3, 3, 2, 6, 40, 80),
               (3, 5, 1, 6, 80, 112), (4, 5, 2, 6, 112, 192), (1, 3, 1, 6, 192, 320)]


def round_filters(filters, width):
    scaled = filters * width
    rounded = max(8, int(scaled + 4) // 8 * 8)
    return rounded + 8 if rounded < 0.9 * scaled else rounded


class SameConv2d(nn.Conv2d):
    """labpose's rule for TensorFlow's "same" padding: stride 1 pads (k-1)*d evenly; stride 2 pads
    (k-2)//2 before and the rest of k-1 after (TensorFlow's values on even sizes)."""

    def __init__(self, cin, cout, kernel, stride=1, dilation=1, groups=1):
        super().__init__(cin, cout, kernel, stride, 0, dilation, groups, bias=False)
        if stride == 1:
            before = after = (kernel - 1) * dilation // 2
        else:
            before = (kernel - 2) // 2
            after = kernel - 1 - before
        self.pad = (before, after, before, after)

    def forward(self, x):
        return super().forward(nn.functional.pad(x, self.pad))


class LiteBlock(nn.Module):
    def __init__(self, cin, cout, kernel, stride, dilation, expansion):
        super().__init__()
        hidden = cin * expansion
        if expansion != 1:
            self._expand_conv = SameConv2d(cin, hidden, 1)
            self._bn0 = nn.BatchNorm2d(hidden, eps=1e-3)
        self._depthwise_conv = SameConv2d(hidden, hidden, kernel, stride, dilation, hidden)
        self._bn1 = nn.BatchNorm2d(hidden, eps=1e-3)
        self._project_conv = SameConv2d(hidden, cout, 1)
        self._bn2 = nn.BatchNorm2d(cout, eps=1e-3)
        self.skip = cin == cout

    def forward(self, inputs):
        x = inputs
        if hasattr(self, "_expand_conv"):
            x = nn.functional.relu6(self._bn0(self._expand_conv(x)))
        x = nn.functional.relu6(self._bn1(self._depthwise_conv(x)))
        x = self._bn2(self._project_conv(x))
        return x + inputs if self.skip else x


def add_efficientnet_lite(module, arch):
    """Gives `module` the backbone's attributes under the package's names; returns its output channels."""
    width, depth = LITE_SCALING[int(arch[-1])]
    module._conv_stem = SameConv2d(3, 32, 3, 2)
    module._bn0 = nn.BatchNorm2d(32, eps=1e-3)
    module._blocks = nn.ModuleList()
    dilation = 1
    for g, (repeats, kernel, stride, expansion, cin, cout) in enumerate(LITE_GROUPS):
        cin = 32 if g == 0 else round_filters(cin, width)
        cout = round_filters(cout, width)
        if g not in (0, len(LITE_GROUPS) - 1):
            repeats = int(math.ceil(depth * repeats))
        if g == 5:  # output stride 16: the last stride-2 group dilates instead
            stride, dilation = 1, 2
        for r in range(repeats):
            module._blocks.append(LiteBlock(cin, cout, kernel, stride if r == 0 else 1, dilation, expansion))
            cin = cout
    module._conv_head = SameConv2d(cin, 1280, 1)
    module._bn1 = nn.BatchNorm2d(1280, eps=1e-3)
    return 1280


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
        elif arch.startswith("efficientnet_lite"):
            channels = add_efficientnet_lite(self, arch)
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
        lite = arch.startswith("efficientnet_lite")  # TensorFlow's Lite preprocessing: (x - 127) / 128
        self.register_buffer("mean", torch.tensor([127.0] * 3 if lite else MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor([128.0] * 3 if lite else STD).view(1, 3, 1, 1), persistent=False)

    def forward(self, images):
        x = (images - self.mean) / self.std
        if self.arch.startswith("resnet"):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        elif self.arch.startswith("efficientnet_lite"):
            x = nn.functional.relu6(self._bn0(self._conv_stem(x)))
            for block in self._blocks:
                x = block(x)
            x = nn.functional.relu6(self._bn1(self._conv_head(x)))
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
    parser.add_argument("--arch", required=True, choices=ARCHITECTURES)
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

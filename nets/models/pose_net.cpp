// build_pose_net: normalization + backbone + DeepLabCut's transposed-convolution head;
// initialization.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "core/error.hpp"
#include "nets/models/models.hpp"
#include "nets/random.hpp"

namespace labpose::nets {

const std::vector<std::string>& pose_architectures() {
  static const std::vector<std::string> names = {
      "resnet_50",          "resnet_101",         "mobilenet_v2_1.0",
      "mobilenet_v2_0.35",  "efficientnet_lite0", "efficientnet_lite1",
      "efficientnet_lite2", "efficientnet_lite3", "efficientnet_lite4"};
  return names;
}

namespace {

bool is_resnet(const std::string& architecture) {
  return architecture.rfind("resnet_", 0) == 0;
}
bool is_efficientnet_lite(const std::string& architecture) {
  return architecture.rfind("efficientnet_lite", 0) == 0;
}

}  // namespace

std::pair<std::vector<float>, std::vector<float>> input_normalization(
    const std::string& architecture) {
  // TensorFlow's EfficientNet-Lite preprocessing (MEAN_RGB 127, STDDEV_RGB 128); the batch-norm
  // statistics of the converted stem fit it, not ImageNet's (the package's example is wrong there).
  if (is_efficientnet_lite(architecture))
    return {{127.0F, 127.0F, 127.0F}, {128.0F, 128.0F, 128.0F}};
  // torchvision's ImageNet statistics, scaled to 0-255 pixels.
  return {{0.485F * 255.0F, 0.456F * 255.0F, 0.406F * 255.0F},
          {0.229F * 255.0F, 0.224F * 255.0F, 0.225F * 255.0F}};
}

namespace {

// features.N -> stage for torchvision's MobileNetV2: stem, groups of (1, 2, 3, 4, 3, 3, 1) inverted
// residual blocks, last convolution.
int mobilenet_v2_stage(int feature) {
  static constexpr int kFirstFeatureOfStage[] = {0, 1, 2, 4, 7, 11, 14, 17, 18};
  int stage = 0;
  for (int first : kFirstFeatureOfStage) {
    if (feature >= first) ++stage;
  }
  return stage;
}

}  // namespace

int backbone_stages(const std::string& architecture) {
  return is_resnet(architecture) ? 5 : 9;
}

int backbone_stage(const std::string& architecture, const std::string& parameter) {
  if (parameter.rfind("head.", 0) == 0) return 0;
  const auto number_after = [&](std::string_view prefix) {
    return std::atoi(parameter.c_str() + prefix.size());
  };
  if (is_resnet(architecture)) {
    if (parameter.rfind("layer", 0) == 0) return number_after("layer") + 1;
    return 1;  // conv1, bn1
  }
  if (is_efficientnet_lite(architecture)) return efficientnet_lite_stage(architecture, parameter);
  if (parameter.rfind("features.", 0) == 0) return mobilenet_v2_stage(number_after("features."));
  throw Error(
      fmt::format("the parameter \"{}\" is not part of a {} backbone", parameter, architecture));
}

std::unique_ptr<Net> build_pose_net(Backend& backend, const PoseNetSpec& spec) {
  const auto& known = pose_architectures();
  if (std::find(known.begin(), known.end(), spec.architecture) == known.end()) {
    throw UsageError(fmt::format("unknown network architecture \"{}\"", spec.architecture),
                     fmt::format("choose one of: {}", fmt::join(known, ", ")));
  }
  if (spec.bodyparts < 1)
    throw UsageError(
        fmt::format("a pose network needs at least 1 bodypart (got {})", spec.bodyparts));
  auto net = std::make_unique<Net>(backend);
  int x = Net::kInput;
  if (spec.normalize_input) {
    auto [mean, std] = input_normalization(spec.architecture);
    x = net->add(std::make_unique<Normalize>("normalize", mean, std), {x});
  }
  int channels = 0;
  if (spec.architecture == "resnet_50" || spec.architecture == "resnet_101") {
    x = add_resnet(*net, x, spec.architecture == "resnet_50" ? 50 : 101);
    channels = 2048;
  } else if (is_efficientnet_lite(spec.architecture)) {
    x = add_efficientnet_lite(*net, x, spec.architecture);
    channels = 1280;
  } else {
    x = add_mobilenet_v2(*net, x, spec.architecture == "mobilenet_v2_1.0" ? 1.0 : 0.35);
    channels = 1280;
  }
  ConvGeometry head = ConvGeometry::symmetric(2, 1);
  head.output_pad_h = head.output_pad_w = 1;  // exactly doubles the size: stride 16 -> 8
  const int score = net->add(
      std::make_unique<ConvTranspose2d>("head.score", channels, spec.bodyparts, 3, head, true),
      {x});
  const int locref = net->add(
      std::make_unique<ConvTranspose2d>("head.locref", channels, 2 * spec.bodyparts, 3, head, true),
      {x});
  net->set_outputs({score, locref}, {"scoremap", "locref"});
  net->finalize();
  return net;
}

void initialize_pose_net(Net& net, std::uint64_t seed) {
  Random random(seed);
  Backend& backend = net.backend();
  for (const auto& parameter : net.parameters()) {
    const Shape& shape = parameter->shape;
    std::vector<float> values(static_cast<std::size_t>(shape.elements()), 0.0F);
    const std::string& name = parameter->name;
    const bool head = name.rfind("head.", 0) == 0;
    const bool weight = name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0;
    if (shape.rank() == 4 && weight) {
      // Kaiming normal, fan-out mode (torchvision); the head: normal with std 0.001 (DeepLabCut).
      const double std =
          head ? 0.001 : std::sqrt(2.0 / static_cast<double>(shape[0] * shape[2] * shape[3]));
      for (float& v : values) v = static_cast<float>(std * random.normal());
    } else if (weight || name.ends_with(".running_var")) {
      std::fill(values.begin(), values.end(), 1.0F);  // batch-norm scale and running variance
    }
    backend.copy_from_host(values.data(), parameter->value);
  }
}

}  // namespace labpose::nets

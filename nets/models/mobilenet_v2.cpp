// MobileNetV2 as torchvision builds it (features.N names, ReLU6, width multiplier with
// _make_divisible), made output stride 16 exactly as ../shared/bench/torch_peer.py does:
// features[14] (the last stride-2 block) gets stride 1, and every 3x3 convolution from features[14]
// on gets dilation 2 and padding 2.
#include <fmt/core.h>

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "core/error.hpp"
#include "nets/models/models.hpp"

namespace labpose::nets {
namespace {

// torchvision's _make_divisible(v, 8).
int make_divisible(double value, int divisor = 8) {
  int rounded = std::max(divisor, static_cast<int>(value + divisor / 2.0) / divisor * divisor);
  if (rounded < 0.9 * value) rounded += divisor;
  return rounded;
}

constexpr int kFirstDilatedBlock = 14;

// Conv2dNormActivation: conv (no bias) + batch norm (+ ReLU6): names <prefix>.0 and <prefix>.1.
int conv_bn_relu6(Net& net, int input, const std::string& prefix, int in, int out, int kernel,
                  const ConvGeometry& geometry, bool activation = true) {
  const int c =
      net.add(std::make_unique<Conv2d>(prefix + ".0", in, out, kernel, geometry, false), {input});
  const int b = net.add(std::make_unique<BatchNorm2d>(prefix + ".1", out), {c});
  return activation ? net.add(std::make_unique<Relu>(prefix + ".2", 6.0F), {b}) : b;
}

}  // namespace

int add_mobilenet_v2(Net& net, int input, double width) {
  struct Stage {
    int expansion, channels, blocks, stride;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int in = make_divisible(32 * width);
  int x = conv_bn_relu6(net, input, "features.0", 3, in, 3, ConvGeometry::symmetric(2, 1));
  int index = 1;
  for (const Stage& stage : stages) {
    const int out = make_divisible(stage.channels * width);
    for (int b = 0; b < stage.blocks; ++b, ++index) {
      const std::string name = fmt::format("features.{}.conv", index);
      int stride = b == 0 ? stage.stride : 1;
      int dilation = 1;
      if (index >= kFirstDilatedBlock) {
        dilation = 2;
        if (index == kFirstDilatedBlock) stride = 1;
      }
      const int hidden = static_cast<int>(std::lround(in * static_cast<double>(stage.expansion)));
      int y = x, part = 0;
      if (stage.expansion != 1) {
        y = conv_bn_relu6(net, y, fmt::format("{}.{}", name, part++), in, hidden, 1,
                          ConvGeometry{});
      }
      y = conv_bn_relu6(net, y, fmt::format("{}.{}", name, part++), hidden, hidden, 3,
                        ConvGeometry::symmetric(stride, dilation, dilation, hidden));
      const int project = net.add(std::make_unique<Conv2d>(fmt::format("{}.{}", name, part), hidden,
                                                           out, 1, ConvGeometry{}, false),
                                  {y});
      y = net.add(std::make_unique<BatchNorm2d>(fmt::format("{}.{}", name, part + 1), out),
                  {project});
      if (stride == 1 && in == out) y = net.add(std::make_unique<Add>(name + ".add"), {y, x});
      x = y;
      in = out;
    }
  }
  const int last = make_divisible(1280 * std::max(1.0, width));
  return conv_bn_relu6(net, x, fmt::format("features.{}", index), in, last, 1, ConvGeometry{});
}

int mobilenet_v2_stage(const std::string& architecture, const std::string& parameter) {
  // features.N -> stage: stem, groups of (1, 2, 3, 4, 3, 3, 1) inverted residual blocks, last
  // convolution.
  static constexpr std::string_view kFeatures = "features.";
  if (parameter.rfind(kFeatures, 0) != 0) {
    throw Error(
        fmt::format("the parameter \"{}\" is not part of a {} backbone", parameter, architecture));
  }
  const int feature = std::atoi(parameter.c_str() + kFeatures.size());
  static constexpr int kFirstFeatureOfStage[] = {0, 1, 2, 4, 7, 11, 14, 17, 18};
  int stage = 0;
  for (int first : kFirstFeatureOfStage) {
    if (feature >= first) ++stage;
  }
  return stage;
}

}  // namespace labpose::nets

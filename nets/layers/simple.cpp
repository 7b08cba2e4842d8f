// The layers without parameters: Normalize, Relu, MaxPool2d, Add.
#include <fmt/core.h>

#include "core/error.hpp"
#include "nets/layer.hpp"

namespace labpose::nets {
namespace {

const Shape& single_image_input(const std::string& name, const std::vector<Shape>& inputs) {
  if (inputs.size() != 1 || inputs[0].rank() != 4) {
    throw Error(fmt::format("{}: expects one (N, C, H, W) input", name));
  }
  return inputs[0];
}

}  // namespace

Normalize::Normalize(std::string name, std::vector<float> mean, std::vector<float> std)
    : Layer(std::move(name)), mean_(std::move(mean)), std_(std::move(std)) {
  LABPOSE_ASSERT(mean_.size() == std_.size());
  for (std::size_t c = 0; c < mean_.size(); ++c) {
    scale_.push_back(1.0F / std_[c]);
    shift_.push_back(-mean_[c] / std_[c]);
  }
}

Shape Normalize::output_shape(const std::vector<Shape>& inputs) const {
  const Shape& input = single_image_input(name(), inputs);
  if (input.c() != static_cast<std::int64_t>(mean_.size())) {
    throw Error(fmt::format("the network expects images with {} channels, got {} (input {})",
                            mean_.size(), input.c(), input.text()),
                "inputs are (N, 3, H, W) RGB images");
  }
  return input;
}

void Normalize::forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
                        bool) {
  backend.channel_affine(*inputs[0], scale_, shift_, output);
}

void Normalize::backward(Backend&, const std::vector<const Tensor*>&, const Tensor&, const Tensor&,
                         const std::vector<Tensor*>& dinputs) {
  LABPOSE_ASSERT(dinputs[0] == nullptr);  // images need no gradient
}

Shape Relu::output_shape(const std::vector<Shape>& inputs) const {
  return single_image_input(name(), inputs);
}

void Relu::forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
                   bool) {
  backend.relu_forward(*inputs[0], output, cap_);
}

void Relu::backward(Backend& backend, const std::vector<const Tensor*>&, const Tensor& output,
                    const Tensor& doutput, const std::vector<Tensor*>& dinputs) {
  if (dinputs[0] != nullptr) backend.relu_backward(doutput, output, *dinputs[0], cap_);
}

Shape MaxPool2d::output_shape(const std::vector<Shape>& inputs) const {
  return max_pool_output_shape(single_image_input(name(), inputs), geometry_);
}

void MaxPool2d::forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
                        bool) {
  backend.max_pool_forward(*inputs[0], output, geometry_);
}

void MaxPool2d::backward(Backend& backend, const std::vector<const Tensor*>& inputs, const Tensor&,
                         const Tensor& doutput, const std::vector<Tensor*>& dinputs) {
  if (dinputs[0] != nullptr) backend.max_pool_backward(doutput, *inputs[0], *dinputs[0], geometry_);
}

Shape Add::output_shape(const std::vector<Shape>& inputs) const {
  if (inputs.size() != 2 || inputs[0] != inputs[1]) {
    throw Error(fmt::format("{}: adds two tensors of the same shape, got {} and {}", name(),
                            inputs.empty() ? "nothing" : inputs[0].text(),
                            inputs.size() < 2 ? "nothing" : inputs[1].text()));
  }
  return inputs[0];
}

void Add::forward(Backend& backend, const std::vector<const Tensor*>& inputs, Tensor& output,
                  bool) {
  backend.add(*inputs[0], *inputs[1], output);
}

void Add::backward(Backend& backend, const std::vector<const Tensor*>&, const Tensor&,
                   const Tensor& doutput, const std::vector<Tensor*>& dinputs) {
  for (Tensor* dinput : dinputs) {
    // The Net hands an input the output's gradient buffer itself when nothing else feeds it.
    if (dinput != nullptr && dinput->raw() != doutput.raw()) backend.copy(doutput, *dinput);
  }
}

}  // namespace labpose::nets

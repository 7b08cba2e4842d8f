// Net: graph bookkeeping, parameter allocation, buffer planning, forward and backward.
#include "nets/net.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "core/error.hpp"

namespace labpose::nets {

int Net::add(std::unique_ptr<Layer> layer, std::vector<int> inputs) {
  LABPOSE_ASSERT(!finalized_);
  const int index = static_cast<int>(nodes_.size());
  for (int input : inputs) {
    LABPOSE_ASSERT(input == kInput || (input >= 0 && input < index));
    if (input != kInput) nodes_[static_cast<std::size_t>(input)].consumers.push_back(index);
  }
  Node node;
  node.layer = std::move(layer);
  node.inputs = std::move(inputs);
  nodes_.push_back(std::move(node));
  return index;
}

void Net::set_outputs(std::vector<int> nodes, std::vector<std::string> names) {
  LABPOSE_ASSERT(nodes.size() == names.size());
  for (int node : nodes)
    LABPOSE_ASSERT(nodes_.at(static_cast<std::size_t>(node)).consumers.empty());
  outputs_ = std::move(nodes);
  output_names_ = std::move(names);
}

std::vector<Parameter> Net::declared_parameters() const {
  // Trainable parameters first (definition order), then state.
  std::vector<Parameter> declared;
  for (const bool trainable : {true, false}) {
    for (const auto& node : nodes_) {
      for (auto& parameter : node.layer->declare_parameters()) {
        if (parameter.trainable == trainable) declared.push_back(std::move(parameter));
      }
    }
  }
  return declared;
}

void Net::finalize() {
  LABPOSE_ASSERT(!finalized_ && !outputs_.empty());
  for (auto& parameter : declared_parameters())
    parameters_.push_back(std::make_unique<Parameter>(std::move(parameter)));
  std::int64_t trainable = 0, state = 0;
  for (const auto& parameter : parameters_)
    (parameter->trainable ? trainable : state) += parameter->shape.elements();
  trainable_values_ = backend_->allocate_flat(trainable);
  trainable_gradients_ = backend_->allocate_flat(trainable);
  state_values_ = backend_->allocate_flat(std::max<std::int64_t>(state, 1));
  backend_->fill(trainable_values_, 0.0F);
  backend_->fill(trainable_gradients_, 0.0F);
  backend_->fill(state_values_, 0.0F);
  std::size_t trainable_offset = 0, state_offset = 0;
  std::map<std::string, Parameter*> by_name;
  for (auto& parameter : parameters_) {
    const auto count = static_cast<std::size_t>(parameter->shape.elements());
    if (parameter->trainable) {
      parameter->value =
          Tensor(trainable_values_.storage(), trainable_values_.offset() + trainable_offset,
                 parameter->shape, Layout::flat);
      parameter->gradient =
          Tensor(trainable_gradients_.storage(), trainable_gradients_.offset() + trainable_offset,
                 parameter->shape, Layout::flat);
      trainable_offset += count;
    } else {
      parameter->value = Tensor(state_values_.storage(), state_values_.offset() + state_offset,
                                parameter->shape, Layout::flat);
      state_offset += count;
    }
    if (!by_name.emplace(parameter->name, parameter.get()).second) {
      throw Error(fmt::format("internal error: two parameters are called {}", parameter->name));
    }
  }
  for (auto& node : nodes_) {
    std::vector<Parameter*> mine;
    for (const auto& declared : node.layer->declare_parameters())
      mine.push_back(by_name.at(declared.name));
    node.layer->bind_parameters(mine);
    for (const Parameter* parameter : mine) {
      if (parameter->trainable && node.first_trainable < 0) {
        node.first_trainable =
            static_cast<std::int64_t>(parameter->gradient.offset() - trainable_gradients_.offset());
      }
    }
  }
  for (Node& node : nodes_) {
    bool needs = false;
    for (const auto& declared : node.layer->declare_parameters())
      needs = needs || declared.trainable;
    for (int input : node.inputs) {
      if (input != kInput) needs = needs || nodes_[static_cast<std::size_t>(input)].needs_gradient;
    }
    node.needs_gradient = needs;
  }
  finalized_ = true;
}

Parameter* Net::find_parameter(const std::string& name) const {
  for (const auto& parameter : parameters_) {
    if (parameter->name == name) return parameter.get();
  }
  return nullptr;
}

std::vector<Shape> Net::output_shapes(const Shape& input) const {
  LABPOSE_ASSERT(finalized_);
  std::vector<Shape> shapes(nodes_.size());
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    std::vector<Shape> inputs;
    for (int i : nodes_[n].inputs)
      inputs.push_back(i == kInput ? input : shapes[static_cast<std::size_t>(i)]);
    shapes[n] = nodes_[n].layer->output_shape(inputs);
  }
  std::vector<Shape> out;
  for (int node : outputs_) out.push_back(shapes[static_cast<std::size_t>(node)]);
  return out;
}

void Net::prepare(const Shape& input, bool training) {
  LABPOSE_ASSERT(finalized_);
  if (input == prepared_shape_ && (prepared_for_training_ || !training)) return;
  if (input.rank() != 4)
    throw Error(fmt::format("the network input must be (N, C, H, W), got {}", input.text()));
  ++generation_;
  for (auto& node : nodes_) {
    node.output = Tensor();
    node.gradient = Tensor();
  }
  accumulation_scratch_.clear();
  have_training_forward_ = false;
  const auto is_output = [&](int n) {
    return std::find(outputs_.begin(), outputs_.end(), n) != outputs_.end();
  };
  for (Node& node : nodes_) {
    std::vector<Shape> shapes;
    for (int i : node.inputs)
      shapes.push_back(i == kInput ? input : nodes_[static_cast<std::size_t>(i)].shape);
    node.shape = node.layer->output_shape(shapes);
    node.layer->prepare(*backend_, shapes);
    // Between layers, values may be narrower than fp32 (Backend::allocate_activation); the
    // net's outputs are fp32.
    const int self = static_cast<int>(&node - nodes_.data());
    Tensor made = is_output(self) ? backend_->allocate(node.shape)
                                  : backend_->allocate_activation(node.shape);
    // A ReLU overwrites its input when nothing else reads that input.
    if (node.layer->can_run_in_place() && node.inputs.size() == 1 && node.inputs[0] != kInput) {
      Node& source = nodes_[static_cast<std::size_t>(node.inputs[0])];
      if (source.consumers.size() == 1 && !is_output(node.inputs[0]) &&
          !source.layer->backward_needs_output() && source.output.element() == made.element()) {
        node.output = source.output;
        continue;
      }
    }
    node.output = std::move(made);
  }
  output_views_.clear();
  for (int node : outputs_) output_views_.push_back(nodes_[static_cast<std::size_t>(node)].output);
  prepared_shape_ = input;
  prepared_for_training_ = training;
  if (training) plan_training_buffers();
}

void Net::plan_training_buffers() {
  // Walk the backward order once, handing out gradient buffers from a pool of dead ones.
  // A gradient has its value's element type; dead buffers are pooled by size and type.
  std::multimap<std::pair<std::int64_t, Element>, Tensor> pool;
  const auto take = [&](const Node& of) {
    const Shape& shape = of.shape;
    const auto found = pool.find({shape.elements(), of.output.element()});
    if (found != pool.end()) {
      const Tensor dead = found->second;
      pool.erase(found);
      return Tensor(dead.storage(), dead.offset(), shape,
                    shape.rank() == 4 ? backend_->activation_layout() : Layout::flat,
                    dead.element());
    }
    return of.output.element() == Element::f32 ? backend_->allocate(shape)
                                               : backend_->allocate_activation(shape);
  };
  const auto is_output = [&](int n) {
    return std::find(outputs_.begin(), outputs_.end(), n) != outputs_.end();
  };
  for (int j = static_cast<int>(nodes_.size()) - 1; j >= 0; --j) {
    Node& node = nodes_[static_cast<std::size_t>(j)];
    if (!node.needs_gradient) continue;
    bool handed_on = false;
    for (int i : node.inputs) {
      if (i == kInput) continue;
      Node& source = nodes_[static_cast<std::size_t>(i)];
      if (!source.needs_gradient) continue;
      if (source.consumers.size() > 1) {
        const std::int64_t count = source.shape.elements();
        if (accumulation_scratch_.count(count) == 0)
          accumulation_scratch_[count] = backend_->allocate_activation(source.shape);
      }
      if (!source.gradient.empty()) continue;
      // A single-consumer input of a ReLU or Add takes over this node's gradient buffer.
      const bool pass_through =
          (node.layer->kind() == LayerKind::relu || node.layer->kind() == LayerKind::add) &&
          source.consumers.size() == 1 && !is_output(j) && !handed_on &&
          source.output.element() == node.output.element();
      if (pass_through) {
        source.gradient = node.gradient;
        handed_on = true;
      } else {
        source.gradient = take(source);
      }
    }
    if (!is_output(j) && !handed_on && !node.gradient.empty()) {
      pool.emplace(std::make_pair(node.shape.elements(), node.gradient.element()), node.gradient);
    }
  }
}

const std::vector<Tensor>& Net::forward(const Tensor& input, bool training) {
  prepare(input.shape(), training);
  for (auto& node : nodes_) {
    std::vector<const Tensor*> inputs;
    for (int i : node.inputs)
      inputs.push_back(i == kInput ? &input : &nodes_[static_cast<std::size_t>(i)].output);
    node.layer->forward(*backend_, inputs, node.output, training);
  }
  have_training_forward_ = training;
  last_input_ = training ? input : Tensor();
  return output_views_;
}

void Net::backward(const std::vector<Tensor>& output_gradients,
                   const std::function<void(std::int64_t)>& gradients_ready) {
  if (!have_training_forward_) {
    throw Error("internal error: backward() without a training forward() on the same input shape",
                "this is a bug in labpose, not in your data; please report it");
  }
  LABPOSE_ASSERT(output_gradients.size() == outputs_.size());
  std::vector<bool> written(nodes_.size(), false);
  std::vector<const Tensor*> gradient_of(nodes_.size(), nullptr);
  for (std::size_t k = 0; k < outputs_.size(); ++k) {
    check_shape("backward", "output gradient", output_gradients[k].shape(),
                nodes_[static_cast<std::size_t>(outputs_[k])].shape);
    gradient_of[static_cast<std::size_t>(outputs_[k])] = &output_gradients[k];
  }
  for (int j = static_cast<int>(nodes_.size()) - 1; j >= 0; --j) {
    Node& node = nodes_[static_cast<std::size_t>(j)];
    if (!node.needs_gradient) continue;
    const Tensor& doutput = gradient_of[static_cast<std::size_t>(j)] != nullptr
                                ? *gradient_of[static_cast<std::size_t>(j)]
                                : node.gradient;
    std::vector<const Tensor*> inputs;
    std::vector<Tensor*> dinputs;
    std::vector<int> accumulate_into;
    std::vector<Tensor> scratch_views;
    scratch_views.reserve(node.inputs.size());
    for (int i : node.inputs) {
      if (i == kInput) {
        inputs.push_back(&last_input_);
        dinputs.push_back(nullptr);
        continue;
      }
      Node& source = nodes_[static_cast<std::size_t>(i)];
      inputs.push_back(&source.output);
      if (!source.needs_gradient) {
        dinputs.push_back(nullptr);
      } else if (!written[static_cast<std::size_t>(i)]) {
        dinputs.push_back(&source.gradient);
        written[static_cast<std::size_t>(i)] = true;
      } else {
        // Scratch is shared by every node with this many elements: view it with this node's shape.
        const Tensor& scratch = accumulation_scratch_.at(source.shape.elements());
        scratch_views.emplace_back(scratch.storage(), scratch.offset(), source.shape,
                                   scratch.layout(), scratch.element());
        dinputs.push_back(&scratch_views.back());
        accumulate_into.push_back(i);
      }
    }
    node.layer->backward(*backend_, inputs, node.output, doutput, dinputs);
    for (std::size_t k = 0; k < accumulate_into.size(); ++k) {
      Node& source = nodes_[static_cast<std::size_t>(accumulate_into[k])];
      backend_->add(source.gradient, scratch_views[k], source.gradient);
    }
    // Parameters follow the nodes' order and each belongs to one node: from this node's first on,
    // no gradient changes any more.
    if (gradients_ready && node.first_trainable >= 0) gradients_ready(node.first_trainable);
  }
}

}  // namespace labpose::nets

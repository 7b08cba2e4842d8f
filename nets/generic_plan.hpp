// An inference plan that runs a fused graph op by op through the Backend interface (convolution,
// then ReLU, residual add and ReLU as separate calls). The reference backend's plan, and the
// executable definition that optimized plans are tested against. Not fast.
#pragma once

#include <memory>

#include "nets/backend.hpp"
#include "nets/fused_graph.hpp"

namespace labpose::nets {

std::unique_ptr<InferencePlan> make_generic_plan(Backend& backend, const FusedGraph& graph,
                                                 const Shape& input);

/// The output shape of every op of `graph` for `input` (shared by all plan builders).
std::vector<Shape> fused_shapes(const FusedGraph& graph, const Shape& input);

/// The most elements any tensor of a plan of `graph` holds per image of `image`'s size (N is
/// ignored): the input, every op's output, and each convolution's input with all its padding.
std::int64_t largest_tensor_per_image(const FusedGraph& graph, const Shape& image);

}  // namespace labpose::nets

// Reference backend: inference plans run op by op.
#include "nets/generic_plan.hpp"
#include "nets/ref/backend.hpp"

namespace labpose::nets::ref {

std::unique_ptr<InferencePlan> RefBackend::compile(const FusedGraph& graph, const Shape& input) {
  return make_generic_plan(*this, graph, input);
}

}  // namespace labpose::nets::ref

// CUDA graph capture and launch (graphs.hpp).
#include "cuda/graphs.hpp"

#include <fmt/core.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "cuda/runtime_check.hpp"

namespace labpose::cuda {
namespace {

thread_local bool capturing = false;
std::atomic<std::int64_t> launched{0};

struct GraphDeleter {
  void operator()(CUgraph_st* graph) const noexcept { cudaGraphDestroy(graph); }
};

}  // namespace

bool cuda_graphs_enabled() {
  const char* value = std::getenv("LABPOSE_CUDA_GRAPHS");
  return value == nullptr || std::string_view(value) != "0";
}

bool capturing_on_this_thread() {
  return capturing;
}

GraphExec capture_graph(cudaStream_t stream, const std::function<void()>& record,
                        std::string& why) {
  cudaError_t status = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (status != cudaSuccess) {
    cudaGetLastError();
    why = fmt::format("cudaStreamBeginCapture: {}", cudaGetErrorString(status));
    return nullptr;
  }
  std::string thrown;
  capturing = true;
  try {
    record();
  } catch (const std::exception& error) {
    thrown = error.what();
  }
  capturing = false;
  cudaGraph_t captured = nullptr;
  status = cudaStreamEndCapture(stream, &captured);
  const std::unique_ptr<CUgraph_st, GraphDeleter> graph(captured);
  if (!thrown.empty() || status != cudaSuccess) {
    cudaGetLastError();  // a failed capture leaves its error behind; the stream itself is fine
    why = !thrown.empty() ? thrown
                          : fmt::format("cudaStreamEndCapture: {}", cudaGetErrorString(status));
    return nullptr;
  }
  cudaGraphExec_t instance = nullptr;
  status = cudaGraphInstantiate(&instance, graph.get(), 0);
  if (status != cudaSuccess) {
    cudaGetLastError();
    why = fmt::format("cudaGraphInstantiate: {}", cudaGetErrorString(status));
    return nullptr;
  }
  return GraphExec(instance);
}

void launch_graph(const GraphExec& graph, cudaStream_t stream, const std::string& context) {
  LABPOSE_CUDA_CHECK(cudaGraphLaunch(graph.get(), stream), context);
  ++launched;
}

std::int64_t graphs_launched() {
  return launched.load();
}

}  // namespace labpose::cuda

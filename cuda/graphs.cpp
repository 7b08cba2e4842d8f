// CUDA graph capture and launch (graphs.hpp).
#include "cuda/graphs.hpp"

#include <fmt/core.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "cuda/memory_pool.hpp"
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

GraphExec capture_graph(cudaStream_t stream, const std::function<void()>& record, std::string& why,
                        cudaStreamCaptureMode mode) {
  cudaError_t status = cudaStreamBeginCapture(stream, mode);
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

namespace {

// A graph and the arena its scratch lives in, replayed on its stream.
class RecordedGraph final : public nets::RecordedWork {
 public:
  RecordedGraph(cudaStream_t stream, GraphExec graph, std::shared_ptr<CaptureArena> arena)
      : stream_(stream), graph_(std::move(graph)), arena_(std::move(arena)) {
    cudaGetDevice(&device_);
  }
  ~RecordedGraph() override {
    // The arena's blocks go back to the pool only after the last replay is done.
    if (cudaSetDevice(device_) == cudaSuccess) cudaStreamSynchronize(stream_);
  }
  RecordedGraph(const RecordedGraph&) = delete;
  RecordedGraph& operator=(const RecordedGraph&) = delete;
  void replay() override { launch_graph(graph_, stream_, "replaying recorded work"); }

 private:
  cudaStream_t stream_;
  int device_ = 0;
  GraphExec graph_;
  std::shared_ptr<CaptureArena> arena_;
};

}  // namespace

std::unique_ptr<nets::RecordedWork> record_on_stream(cudaStream_t stream,
                                                     const std::shared_ptr<DevicePool>& pool,
                                                     const std::function<void()>& work,
                                                     std::string& why) {
  if (!cuda_graphs_enabled()) {
    why = "LABPOSE_CUDA_GRAPHS=0 turns CUDA graphs off";
    return nullptr;
  }
  pool->begin_capture();
  GraphExec graph = capture_graph(stream, work, why, cudaStreamCaptureModeRelaxed);
  std::shared_ptr<CaptureArena> arena = pool->end_capture();
  if (graph == nullptr) {
    why = "capturing it as a CUDA graph failed: " + why;
    return nullptr;
  }
  return std::make_unique<RecordedGraph>(stream, std::move(graph), std::move(arena));
}

std::int64_t graphs_launched() {
  return launched.load();
}

}  // namespace labpose::cuda

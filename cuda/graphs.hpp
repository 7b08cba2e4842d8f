// CUDA graphs: the work an inference plan queues on its stream, captured once (not run) and then
// launched as one unit, so that a run costs one launch instead of one per kernel and cuDNN call:
// what batch-1 latency is made of. Internal to cuda/.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>

#include "cuda/handles.hpp"
#include "nets/backend.hpp"

namespace labpose::cuda {

/// Whether plans capture their work as CUDA graphs: yes, unless LABPOSE_CUDA_GRAPHS=0 (for A/B
/// comparisons and as a way out).
bool cuda_graphs_enabled();

/// The work `record` queues on `stream`, captured without running and instantiated. Null, with
/// `why` saying why, when capturing or instantiating fails (or `record` throws); the stream is
/// then back to normal and nothing of the work ran. In `mode` ThreadLocal (an inference plan,
/// whose buffers exist already) only this thread's calls are restricted while capturing (other
/// threads drive other streams); Relaxed lets the work allocate device memory as it goes (a
/// training step's scratch, DevicePool::begin_capture).
GraphExec capture_graph(cudaStream_t stream, const std::function<void()>& record, std::string& why,
                        cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal);

/// Whether this thread is capturing a graph now (a failing cuDNN call then must not switch to a
/// fallback algorithm for good: capture_graph fails instead and the work runs op by op).
bool capturing_on_this_thread();

/// Queues `graph` on `stream`.
void launch_graph(const GraphExec& graph, cudaStream_t stream, const std::string& context);

/// Records `work` on `pool`'s backend stream as a graph whose scratch comes from a capture arena of
/// `pool` (memory_pool.hpp), kept with the graph; null with `why` when capturing fails.
class DevicePool;
std::unique_ptr<nets::RecordedWork> record_on_stream(cudaStream_t stream,
                                                     const std::shared_ptr<DevicePool>& pool,
                                                     const std::function<void()>& work,
                                                     std::string& why);

/// Graphs launched by this process so far (tests check that plans really run as graphs).
std::int64_t graphs_launched();

}  // namespace labpose::cuda

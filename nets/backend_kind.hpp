// One row of the backend registry (devices/registry.cpp): a kind of device (the CPU, the reference
// loops, NVIDIA GPUs), how to tell whether device N of that kind can be used, how to start a
// backend on it, and what `labpose doctor` shows about it. Each backend library provides its own
// row; this header is only the shape of a row, not the table.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nets/backend.hpp"
#include "nets/communicator.hpp"

namespace labpose::nets {

/// What `labpose doctor` shows about the GPUs of one kind.
struct GpuReport {
  struct Gpu {
    int index = 0;
    std::string text;  // "0: NVIDIA H100 80GB HBM3, compute capability 9.0, 79.6 GiB, 132 ..."
    bool usable = false;
  };
  bool compiled = false;
  std::string versions;  // "CUDA runtime 13.0, cuDNN 9.19.0"
  std::string driver;    // "supports CUDA 13.0" or "not installed"
  std::vector<Gpu> gpus;
  std::string problem;  // why no GPU is usable
};

/// A GPU that --device auto may start: its index and its name for messages.
struct GpuCandidate {
  int index = 0;
  std::string name;
};

struct BackendKind {
  std::string name;       // "ref", "cpu", "cuda": what --device names
  bool compiled = true;   // false: a row saying this build lacks the kind (problem() says why)
  bool numbered = false;  // a GPU kind: devices are "<name>" (the first) and "<name>:N"
  bool reduced_precision = false;  // its inference plans can compute in fp16 or bf16
  /// The precision --precision auto picks on device `index` (fp32 unless set).
  std::function<PlanPrecision(int index)> automatic_precision;
  /// The precision training's `auto` picks there (unset: automatic_precision's choice).
  std::function<PlanPrecision(int index)> automatic_training_precision;
  /// Whether device `index` has TF32 units (unset: none; --precision tf32 is fp32 there).
  std::function<bool(int index)> tf32;
  /// Why device `index` of this kind cannot be used on this machine, or "" when it can.
  std::function<std::string(int index)> problem;
  /// The usable devices --device auto may try, best first; `why_none` says why there are none.
  std::function<std::vector<GpuCandidate>(std::string& why_none)> candidates;
  /// A backend on device `index`; throws a labpose::Error saying why it cannot start.
  std::function<std::unique_ptr<Backend>(int index, PlanPrecision precision)> make;
  /// The doctor's report (numbered kinds).
  std::function<GpuReport()> report;
  /// A communicator for gradients in this kind's device memory, over the ranks of `host` (GPU
  /// kinds built with one: NCCL); empty when there is none.
  std::function<std::unique_ptr<Communicator>(Communicator& host, Backend& backend)> communicator;
};

}  // namespace labpose::nets

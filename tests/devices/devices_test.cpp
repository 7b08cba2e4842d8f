// Device choice: names, the error when a GPU is asked for but cannot be used (never a silent CPU),
// --device auto, and --precision. Runs on every machine; the branches taken depend on whether this
// build has CUDA and this machine a usable GPU, and each branch checks what a user would see.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"
#include "devices/devices.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::devices {
namespace {

using testing::contains;

bool has_cuda() {
  const auto names = compiled_backends();
  return std::find(names.begin(), names.end(), "cuda") != names.end();
}

TEST(Devices, CpuAndRefAreAlwaysThere) {
  EXPECT_EQ(make_backend("cpu")->name(), "cpu");
  EXPECT_EQ(make_backend("ref")->name(), "ref");
  EXPECT_EQ(device_problem("cpu"), "");
}

TEST(Devices, UnknownNamesAreUsageErrors) {
  for (const char* name : {"gpu", "cuda:", "cuda:x", "cuda:-1", "cuda:1x", "CPU"}) {
    EXPECT_THROW(make_backend(name), UsageError) << name;
  }
  EXPECT_THROW(parse_plan_precision("fp64"), UsageError);
  EXPECT_EQ(parse_plan_precision("bf16"), PlanPrecision::bf16);
  // The CPU computes in fp32 only: asking for fp16 there is a usage error, not ignored.
  EXPECT_THROW(make_backend("cpu", PlanPrecision::fp16), UsageError);
}

TEST(Devices, AskingForAnUnusableGpuFailsWithTheReason) {
  const std::string problem = device_problem("cuda");
  if (problem.empty()) {
    // A usable GPU: cuda works, and a GPU that does not exist is an error naming the range.
    EXPECT_EQ(make_backend("cuda")->name(), "cuda:0");
    try {
      make_backend("cuda:99");
      FAIL() << "expected an error";
    } catch (const Error& error) {
      EXPECT_TRUE(contains(error.what(), "no GPU 99")) << error.what();
    }
    return;
  }
  if (has_cuda()) {
    EXPECT_TRUE(contains(problem, "driver") || contains(problem, "GPU") ||
                contains(problem, "compute capability"))
        << problem;
  } else {
    EXPECT_TRUE(contains(problem, "no CUDA backend")) << problem;
  }
  for (const char* name : {"cuda", "cuda:0", "cuda:3"}) {
    try {
      make_backend(name);
      FAIL() << name << ": expected an error, not a silent fallback";
    } catch (const UsageError& error) {
      FAIL() << name << ": a machine without a GPU is not a usage error: " << error.what();
    } catch (const Error& error) {
      EXPECT_TRUE(contains(error.what(), problem)) << error.what();
      EXPECT_TRUE(contains(error.what(), std::string("--device ") + name)) << error.what();
      EXPECT_FALSE(error.hint().empty());
    }
  }
}

// tf32 is fp32 with TF32 products: training's `auto` on a GPU, so it must work on every device.
// Where there are no TF32 units (CPUs, the reference, GPUs before compute capability 8.0) it is
// exactly fp32; on a GPU with them, both the training ops and fp32 plans say tf32.
TEST(Devices, Tf32IsFp32WhereTheDeviceHasNoTf32Units) {
  EXPECT_EQ(parse_plan_precision("tf32"), PlanPrecision::tf32);
  for (const char* device : {"cpu", "ref"}) {
    const auto backend = make_backend(device, PlanPrecision::tf32);
    EXPECT_EQ(backend->plan_precision(), PlanPrecision::fp32) << device;
    EXPECT_EQ(backend->training_precision(), PlanPrecision::fp32) << device;
  }
  if (!device_problem("cuda").empty()) return;
  const auto gpu = make_backend("cuda", PlanPrecision::tf32);
  const auto strict = make_backend("cuda", PlanPrecision::fp32);
  EXPECT_EQ(strict->training_precision(), PlanPrecision::fp32);
  EXPECT_EQ(gpu->training_precision(), gpu->plan_precision());
  EXPECT_TRUE(contains(gpu->description(), "TF32") ==
              (gpu->training_precision() == PlanPrecision::tf32))
      << gpu->description();
}

// `auto` for training: the CPU's choice as for inference (bf16 where its bf16 units are clearly
// faster), the reference's fp32, and a GPU's tf32 where inference plans keep fp32.
TEST(Devices, TrainingsAutoIsTf32OnAGpuAndTheInferenceChoiceElsewhere) {
  for (const char* device : {"cpu", "ref"}) {
    const auto inference = make_backend(device, PlanPrecision::automatic);
    const auto training = make_backend(device, PlanPrecision::automatic, Purpose::training);
    EXPECT_EQ(training->plan_precision(), inference->plan_precision()) << device;
    EXPECT_EQ(training->training_precision(), inference->training_precision()) << device;
  }
  EXPECT_EQ(make_backend("ref", PlanPrecision::automatic, Purpose::training)->training_precision(),
            PlanPrecision::fp32);
  if (!device_problem("cuda").empty()) return;
  const auto training = make_backend("cuda", PlanPrecision::automatic, Purpose::training);
  EXPECT_EQ(training->training_precision(),
            make_backend("cuda", PlanPrecision::tf32)->training_precision());
  EXPECT_EQ(make_backend("cuda", PlanPrecision::automatic)->plan_precision(), PlanPrecision::fp32);
}

TEST(Devices, AutoPicksAUsableGpuOrTheCpu) {
  const auto backend = make_backend("auto");
  if (device_problem("cuda").empty()) {
    EXPECT_EQ(backend->name(), "cuda:0");
  } else {
    EXPECT_EQ(backend->name(), "cpu");
  }
}

TEST(Devices, DeviceKindIsTheRowAutoWouldStartWithoutStartingIt) {
  for (const char* host : {"cpu", "ref"}) {
    const DeviceKind kind = device_kind(host);
    EXPECT_EQ(kind.name, host);
    EXPECT_FALSE(kind.gpu) << host;
  }
  for (const char* gpu : {"cuda", "cuda:3"}) {  // a GPU kind whether or not it is usable here
    const DeviceKind kind = device_kind(gpu);
    EXPECT_EQ(kind.name, "cuda");
    EXPECT_TRUE(kind.gpu) << gpu;
  }
  const DeviceKind automatic = device_kind("auto");
  EXPECT_EQ(automatic.name, make_backend("auto")->host_memory() ? "cpu" : "cuda");
  EXPECT_EQ(automatic.gpu, device_problem("cuda").empty());
  EXPECT_THROW(device_kind("tpu"), UsageError);
}

TEST(Devices, DoctorsSummaryExplainsMissingGpus) {
  const CudaSummary summary = cuda_summary();
  EXPECT_EQ(summary.compiled, has_cuda());
  if (summary.compiled) {
    EXPECT_TRUE(contains(summary.versions, "cuDNN")) << summary.versions;
  }
  bool usable = false;
  for (const auto& gpu : summary.gpus) usable = usable || gpu.usable;
  EXPECT_EQ(summary.problem.empty(), usable) << summary.problem;
}

}  // namespace
}  // namespace labpose::devices

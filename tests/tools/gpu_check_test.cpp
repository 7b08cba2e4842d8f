// tools/gpu-check.sh, the GPU machine's check: without a usable GPU it says so and succeeds (as on
// every machine the suite runs on), and its whole flow (labpose bench, PyTorch beside it, the
// table with ratios only between like arithmetic, analysis's path with and without a video) runs
// on the CPU with --device cpu --quick.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "devices/devices.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
using testing::contains;
using testing::shell_quote;

std::string gpu_check(const std::string& arguments, const std::string& python = "python3") {
  const std::string script =
      (std::filesystem::path(LABPOSE_SOURCE_DIR) / "tools" / "gpu-check.sh").string();
  return "PYTHON=" + shell_quote(python) + " " + shell_quote(script) + " --labpose " +
         shell_quote(testing::labpose_binary()) + " " + arguments;
}

TEST(GpuCheck, WithoutAUsableGpuItSaysSoAndSucceeds) {
  if (devices::device_problem("cuda").empty()) GTEST_SKIP() << "this machine has a usable GPU";
  const testing::CommandResult result = testing::run(gpu_check("--test-dir /nonexistent"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "no usable GPU")) << result.output;
  EXPECT_TRUE(contains(result.output, devices::device_problem("cuda"))) << result.output;
}

TEST(GpuCheck, TablesLabposeBesidePyTorchComparingOnlyLikeArithmetic) {
  const auto python = testing::torch_python();
  const testing::TempDir dir;
  const std::filesystem::path video = dir / "clip.avi";
  testing::write_test_video(video, 12, 96, 64);
  const testing::CommandResult result = testing::run(gpu_check(
      "--device cpu --quick --video " + shell_quote(video.string()), python.value_or("python3")));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "| work | precision | labpose |")) << result.output;
  const std::string number = R"(\d+\.\d)";
  const std::string fp32 = "\\| mobilenet_v2_0.35 96x64 b2 inference \\| fp32 \\| " + number;
  // tf32 is fp32 on a CPU: the row says what ran, and gives no ratio against PyTorch's TF32 mode.
  const std::string tf32 = "\\| mobilenet_v2_0.35 96x64 b2 inference \\| tf32 \\(ran fp32\\) \\| ";
  const std::string training = "\\| mobilenet_v2_0.35 64x64 b2 training \\| fp32 \\| " + number;
  // Analysis's whole path has no PyTorch twin: no peer, no ratio.
  const std::string pipeline =
      "\\| mobilenet_v2_0.35 96x64 b2 analysis path, 2 slots \\| fp32 \\| " + number;
  EXPECT_TRUE(std::regex_search(result.output, std::regex(pipeline + ".*frames/s \\|  \\|  \\|")))
      << result.output;
  // Op by op (LABPOSE_CUDA_GRAPHS=0: the A/B row of CUDA graphs): no PyTorch twin either.
  const std::string op_by_op =
      "\\| mobilenet_v2_0.35 96x64 b1 inference, op by op \\(no CUDA graphs\\) \\| fp32 \\| " +
      number;
  EXPECT_TRUE(std::regex_search(result.output, std::regex(op_by_op + ".*frames/s \\|  \\|  \\|")))
      << result.output;
  // With a video: decoding included, and how much of decoding alone that is.
  const std::string with_video =
      "\\| mobilenet_v2_0.35 b4 analysis path on clip.avi, 1 slot \\| fp32 \\| " + number +
      ".* frames/s \\(\\d+ % of decoding alone, \\d+\\) \\|  \\|  \\|";
  EXPECT_TRUE(std::regex_search(result.output, std::regex(with_video))) << result.output;
  if (!python) {
    EXPECT_TRUE(std::regex_search(result.output, std::regex(fp32 + ".*frames/s \\|  \\|  \\|")))
        << result.output;
    return;
  }
  const std::string peer = " \\| " + number + ".* \\| " + number + ".* \\|";
  EXPECT_TRUE(std::regex_search(result.output, std::regex(fp32 + ".*frames/s" + peer)))
      << result.output;
  EXPECT_TRUE(std::regex_search(result.output, std::regex(tf32 + ".* \\| not alike \\|")))
      << result.output;
  EXPECT_TRUE(std::regex_search(result.output, std::regex(training + ".*images/s" + peer)))
      << result.output;
}

}  // namespace
}  // namespace labpose

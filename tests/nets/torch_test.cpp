// Whole models against PyTorch on the same random weights (tools/torch_reference.py builds them
// with Debian's python3-torch): every architecture's eval-mode outputs through the Net and through
// the compiled inference plan, and a training step's gradients and batch statistics.
#include <gtest/gtest.h>

#include <cmath>

#include "devices/devices.hpp"
#include "nets/fused_graph.hpp"
#include "nets/models/models.hpp"
#include "nets/npy.hpp"
#include "nets/safetensors.hpp"
#include "tests/nets/nets_test_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::nets {
namespace {
namespace fs = std::filesystem;
using testing::close;
using testing::download;
using testing::max_abs;
using testing::relative_l2_error;
using testing::upload;

// Runs the reference script; returns the folder with its files.
void make_reference(const std::string& python, const std::string& architecture, const fs::path& out,
                    const std::string& size, int batch, const std::string& options = {}) {
  const auto result =
      ::labpose::testing::run(::labpose::testing::shell_quote(python) + " " +
                              ::labpose::testing::shell_quote(std::string(LABPOSE_SOURCE_DIR) +
                                                              "/tools/torch_reference.py") +
                              " --arch " + architecture + " --bodyparts 3 --size " + size +
                              " --batch " + std::to_string(batch) + " --seed 5 --out " +
                              ::labpose::testing::shell_quote(out.string()) + " " + options);
  ASSERT_EQ(result.exit_code, 0) << result.output;
}

Shape shape_of(const NpyArray& array) {
  return Shape(array.shape);
}

class AgainstPyTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(AgainstPyTorch, EvalOutputsOfEveryArchitecture) {
  LABPOSE_REQUIRE_TORCH(python);
  LABPOSE_SKIP_UNLESS_USABLE(GetParam());
  auto backend = devices::make_backend(GetParam());
  for (const auto& architecture : pose_architectures()) {
    // The reference backend's ResNets take minutes at this size, and the larger EfficientNet-Lites
    // add nothing lite0 does not check; the CPU backend covers them and net_test compares the two
    // backends on every architecture.
    if (GetParam() == "ref" &&
        (architecture.rfind("resnet", 0) == 0 ||
         (architecture.rfind("efficientnet_lite", 0) == 0 && architecture != "efficientnet_lite0")))
      continue;
    SCOPED_TRACE(architecture);
    const ::labpose::testing::TempDir dir;
    make_reference(python, architecture, dir.path(), "72x56", 2);
    auto net = build_pose_net(*backend, {architecture, 3, true});
    load_weights(*net, read_safetensors(dir / "weights.safetensors"), LoadScope::all,
                 dir / "weights.safetensors");
    const NpyArray input = read_npy(dir / "input.npy");
    const NpyArray score = read_npy(dir / "scoremap.npy"), locref = read_npy(dir / "locref.npy");
    const Tensor x = upload(*backend, shape_of(input), input.values);
    const auto& outputs = net->forward(x, false);
    ASSERT_EQ(outputs[0].shape(), shape_of(score));
    ASSERT_EQ(outputs[1].shape(), shape_of(locref));
    EXPECT_TRUE(
        close(download(*backend, outputs[0]), score.values, 1e-3, 2e-4 * max_abs(score.values)))
        << "scoremap";
    EXPECT_TRUE(
        close(download(*backend, outputs[1]), locref.values, 1e-3, 2e-4 * max_abs(locref.values)))
        << "locref";
    auto plan = backend->compile(net->fuse(true), x.shape());
    const auto& planned = plan->run(x);
    EXPECT_TRUE(
        close(download(*backend, planned[0]), score.values, 1e-3, 2e-4 * max_abs(score.values)))
        << "scoremap (inference plan)";
    EXPECT_TRUE(
        close(download(*backend, planned[1]), locref.values, 1e-3, 2e-4 * max_abs(locref.values)))
        << "locref (inference plan)";
  }
}

// One training step of mobilenet_v2_0.35 against PyTorch's autograd. With frozen batch norm every
// gradient must agree element by element. With batch statistics a single ReLU that flips under
// float rounding (a value within 1e-7 of zero) changes a whole channel's gradient through the batch
// coupling, so there the head must agree exactly and the rest within 5 % in L2; the batch
// statistics themselves (a forward quantity) must agree element by element.
void expect_training_step_like_pytorch(Backend& backend, const std::string& python, bool frozen) {
  SCOPED_TRACE(frozen ? "frozen batch norm" : "batch statistics");
  const ::labpose::testing::TempDir dir;
  make_reference(python, "mobilenet_v2_0.35", dir.path(), "64x56", 2,
                 frozen ? "--train --frozen-batch-norm" : "--train");
  auto net = build_pose_net(backend, {"mobilenet_v2_0.35", 3, true});
  for (int n = 0; n < static_cast<int>(net->node_count()); ++n) {
    if (net->layer(n).kind() == LayerKind::batch_norm)
      static_cast<BatchNorm2d&>(net->layer(n)).set_frozen(frozen);
  }
  load_weights(*net, read_safetensors(dir / "weights.safetensors"), LoadScope::all,
               dir / "weights.safetensors");
  const NpyArray input = read_npy(dir / "input.npy"), r0 = read_npy(dir / "r0.npy"),
                 r1 = read_npy(dir / "r1.npy");
  const auto& outputs = net->forward(upload(backend, shape_of(input), input.values), true);
  const NpyArray score = read_npy(dir / "train_scoremap.npy");
  EXPECT_TRUE(
      close(download(backend, outputs[0]), score.values, 1e-3, 2e-4 * max_abs(score.values)));
  net->backward(
      {upload(backend, shape_of(r0), r0.values), upload(backend, shape_of(r1), r1.values)});
  const SafetensorsFile gradients = read_safetensors(dir / "gradients.safetensors");
  const SafetensorsFile statistics = read_safetensors(dir / "running_statistics.safetensors");
  double largest = 0.0;
  std::vector<float> all_actual, all_expected;
  for (const auto& [name, tensor] : gradients.tensors)
    largest = std::max(largest, max_abs(tensor.values));
  for (const auto& parameter : net->parameters()) {
    const auto& reference = (parameter->trainable ? gradients : statistics).tensors;
    const auto found = reference.find(parameter->name);
    ASSERT_NE(found, reference.end()) << parameter->name;
    const auto actual =
        download(backend, parameter->trainable ? parameter->gradient : parameter->value);
    const auto& expected = found->second.values;
    if (parameter->trainable) {
      all_actual.insert(all_actual.end(), actual.begin(), actual.end());
      all_expected.insert(all_expected.end(), expected.begin(), expected.end());
    }
    if (parameter->trainable && !frozen && parameter->name.rfind("head.", 0) != 0) continue;
    // Gradients that vanish in exact arithmetic are float noise: judge them on the network's scale.
    EXPECT_TRUE(close(actual, expected, 2e-3, std::max(2e-4 * max_abs(expected), 1e-6 * largest)))
        << parameter->name;
  }
  EXPECT_LT(relative_l2_error(all_actual, all_expected), frozen ? 1e-4 : 5e-2);
}

TEST_P(AgainstPyTorch, TrainingStepGradientsAndBatchStatistics) {
  LABPOSE_REQUIRE_TORCH(python);
  LABPOSE_SKIP_UNLESS_USABLE(GetParam());
  auto backend = devices::make_backend(GetParam());
  expect_training_step_like_pytorch(*backend, python, true);
  expect_training_step_like_pytorch(*backend, python, false);
}

TEST(ConvertWeights, TorchvisionAndTimmCheckpointsLoadAsBackbones) {
  LABPOSE_REQUIRE_TORCH(python);
  const ::labpose::testing::TempDir dir;
  const std::string tools = std::string(LABPOSE_SOURCE_DIR) + "/tools";
  const auto q = [](const auto& text) { return ::labpose::testing::shell_quote(text); };
  auto result = ::labpose::testing::run(
      q(python) + " " +
      q((::labpose::testing::python_scripts_dir() / "make_checkpoints.py").string()) + " " +
      q(tools) + " " + q(dir.path().string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  struct Case {
    const char* checkpoint;
    const char* reference;
    const char* architecture;
  };
  auto backend = devices::make_backend("cpu");
  for (const Case& c :
       {Case{"resnet50.pth", "resnet50_reference.safetensors", "resnet_50"},
        Case{"mobilenetv2_035_timm.pth", "mobilenet_reference.safetensors", "mobilenet_v2_0.35"}}) {
    SCOPED_TRACE(c.checkpoint);
    const fs::path converted = dir / (std::string(c.architecture) + ".safetensors");
    result = ::labpose::testing::run(q(python) + " " + q(tools + "/convert_weights.py") + " " +
                                     q((dir / c.checkpoint).string()) + " " +
                                     q(converted.string()) + " --arch " + c.architecture);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    const SafetensorsFile weights = read_safetensors(converted);
    EXPECT_EQ(weights.metadata.at("architecture"), c.architecture);
    auto net = build_pose_net(*backend, {c.architecture, 4, true});
    load_weights(*net, weights, LoadScope::backbone, converted);
    const SafetensorsFile reference = read_safetensors(dir / c.reference);
    for (const auto& [name, tensor] : reference.tensors) {
      const Parameter* parameter = net->find_parameter(name);
      ASSERT_NE(parameter, nullptr) << name;
      EXPECT_EQ(download(*backend, parameter->value), tensor.values) << name;
    }
  }
  // The wrong architecture is refused with a list of what does not fit.
  result = ::labpose::testing::run(q(python) + " " + q(tools + "/convert_weights.py") + " " +
                                   q((dir / "resnet50.pth").string()) + " " +
                                   q((dir / "x.safetensors").string()) + " --arch resnet_101");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("does not hold resnet_101 weights: tensors"), std::string::npos)
      << result.output;
  EXPECT_FALSE(fs::exists(dir / "x.safetensors"));
}

INSTANTIATE_TEST_SUITE_P(Backends, AgainstPyTorch,
                         ::testing::ValuesIn(devices::compiled_backends()),
                         testing::backend_test_name);

}  // namespace
}  // namespace labpose::nets

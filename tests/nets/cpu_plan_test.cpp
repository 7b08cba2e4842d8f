// The CPU backend's inference plans run a batch in passes that fit the cache: every pass size
// gives the one-pass plan's outputs, the passes grow with the cache and always divide the batch,
// a short batch runs only its frames' passes, and a 640x480 batch of 8 runs in passes of fewer
// frames on a 32 MiB cache. Sibling heads
// (transposed convolutions of one input) computed as one give each head's own outputs, and narrow
// transposed convolutions computed as a 1x1 convolution and a gather of the taps give the
// reference's.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "devices/devices.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/fused_graph.hpp"
#include "nets/models/models.hpp"
#include "nets/ref/backend.hpp"
#include "tests/nets/plan_test_support.hpp"

namespace labpose::nets {
namespace {
using testing::close;
using testing::download;
using testing::max_abs;
using testing::random_values;
using testing::upload;

std::vector<PlanPrecision> precisions_here() {
  std::vector<PlanPrecision> precisions{PlanPrecision::fp32};
  if (cpu::cpu_has_bf16()) precisions.push_back(PlanPrecision::bf16);
  return precisions;
}

// Every output of `graph`'s CPU plan in each precision this CPU runs against the reference's, on
// random input drawn with `seed`.
void expect_outputs_of_the_reference(const FusedGraph& graph, const Shape& input,
                                     std::uint64_t seed) {
  const auto x = random_values(input.elements(), seed);
  ref::RefBackend ref;
  const auto expected = testing::run_plan(ref, graph, input, x);
  for (const PlanPrecision precision : precisions_here()) {
    SCOPED_TRACE(precision == PlanPrecision::bf16 ? "bf16" : "fp32");
    cpu::CpuBackend backend(precision);
    const auto actual = testing::run_plan(backend, graph, input, x);
    ASSERT_EQ(actual.size(), expected.size());
    const double tolerance = precision == PlanPrecision::bf16 ? 2e-2 : 1e-5;
    for (std::size_t k = 0; k < actual.size(); ++k) {
      EXPECT_LT(testing::relative_l2_error(actual[k], expected[k]), tolerance)
          << graph.output_names[k];
    }
  }
}

TEST(CpuPlanPasses, EveryPassSizeGivesTheOnePassOutputs) {
  for (const PlanPrecision precision : precisions_here()) {
    SCOPED_TRACE(precision == PlanPrecision::bf16 ? "bf16" : "fp32");
    cpu::CpuBackend backend(precision);
    auto net = build_pose_net(backend, {"mobilenet_v2_0.35", 3, true});
    initialize_pose_net(*net, 41);
    const FusedGraph graph = net->fuse(true);
    const Shape input{6, 3, 48, 64};
    const Tensor image = upload(backend, input, random_values(input.elements(), 42, 127.0));
    // The cache from 1 KiB to 1 GiB: passes of 1, 2, 3 and then 6 frames.
    std::map<std::int64_t, std::vector<std::vector<float>>> outputs;  // by frames per pass
    std::int64_t previous = 0;
    for (std::size_t cache = std::size_t{1} << 10; cache <= (std::size_t{1} << 30); cache *= 2) {
      backend.set_cache_bytes(cache);
      auto plan = backend.compile(graph, input);
      const std::int64_t frames = plan->frames_per_pass();
      EXPECT_EQ(input.n() % frames, 0) << frames << " frames per pass at a cache of " << cache;
      EXPECT_GE(frames, previous) << "a larger cache never gives smaller passes";
      previous = frames;
      if (outputs.count(frames) != 0) continue;
      EXPECT_EQ(plan->output_shapes()[0].n(), input.n());
      const auto& y = plan->run(image);
      for (const Tensor& output : y) outputs[frames].push_back(download(backend, output));
    }
    EXPECT_EQ(outputs.begin()->first, 1) << "a tiny cache runs one frame at a time";
    EXPECT_EQ(outputs.rbegin()->first, input.n()) << "a large cache runs the batch at once";
    EXPECT_GE(outputs.size(), 3U) << "passes of 2 or 3 frames in between";
    const auto& whole = outputs.rbegin()->second;
    for (const auto& [frames, results] : outputs) {
      SCOPED_TRACE(std::to_string(frames) + " frames per pass");
      for (std::size_t k = 0; k < whole.size(); ++k)
        EXPECT_TRUE(close(results[k], whole[k], 1e-5, 1e-6 * max_abs(whole[k]))) << "output " << k;
    }
  }
}

// A video's last batch may be short: run_first(x, 3) on a batch of 6 in passes of 1 computes the
// first 3 frames as run() does and leaves the outputs of the other 3 as the previous run wrote
// them (their passes did not run).
TEST(CpuPlanPasses, AShortBatchRunsOnlyThePassesOfItsFrames) {
  cpu::CpuBackend backend(PlanPrecision::fp32);
  backend.set_cache_bytes(std::size_t{1} << 10);
  auto net = build_pose_net(backend, {"mobilenet_v2_0.35", 3, true});
  initialize_pose_net(*net, 43);
  const Shape input{6, 3, 48, 64};
  auto plan = backend.compile(net->fuse(true), input);
  ASSERT_EQ(plan->frames_per_pass(), 1);
  const auto outputs_of = [&](const std::vector<Tensor>& y) {
    std::vector<std::vector<float>> host;
    for (const Tensor& output : y) host.push_back(download(backend, output));
    return host;
  };
  const Tensor first = upload(backend, input, random_values(input.elements(), 44, 127.0));
  const Tensor second = upload(backend, input, random_values(input.elements(), 45, 127.0));
  const auto of_first = outputs_of(plan->run(first));
  const auto of_second = outputs_of(plan->run(second));
  const auto short_batch = outputs_of(plan->run_first(first, 3));
  for (std::size_t k = 0; k < short_batch.size(); ++k) {
    const std::size_t half = short_batch[k].size() / 2;
    const auto head = [&](const std::vector<float>& v) {
      return std::vector<float>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(half));
    };
    const auto tail = [&](const std::vector<float>& v) {
      return std::vector<float>(v.begin() + static_cast<std::ptrdiff_t>(half), v.end());
    };
    EXPECT_EQ(head(short_batch[k]), head(of_first[k])) << "output " << k << ": frames 0-2";
    EXPECT_EQ(tail(short_batch[k]), tail(of_second[k])) << "output " << k << ": frames 3-5";
    EXPECT_NE(tail(short_batch[k]), tail(of_first[k])) << "the two inputs differ";
  }
}

// mobilenet_v2_0.35 at 640x480: 8 frames' activations of the early layers (tens of MB) are more
// than half of a 32 MiB cache, so the batch runs in smaller passes; 160x128 frames run at once.
TEST(CpuPlanPasses, LargeFramesRunInSmallerPasses) {
  cpu::CpuBackend backend(PlanPrecision::fp32);
  backend.set_cache_bytes(std::size_t{32} << 20);
  auto net = build_pose_net(backend, {"mobilenet_v2_0.35", 4, true});
  const FusedGraph graph = net->fuse(true);
  EXPECT_LT(backend.compile(graph, Shape{8, 3, 480, 640})->frames_per_pass(), 8);
  EXPECT_EQ(backend.compile(graph, Shape{8, 3, 128, 160})->frames_per_pass(), 8);
  const auto reference = devices::make_backend("ref");
  EXPECT_EQ(reference->compile(graph, Shape{8, 3, 32, 32})->frames_per_pass(), 8)
      << "other backends run the whole batch";
}

// Three heads of different widths on one input (one with a ReLU: it stays apart), one with
// another stride (apart), and one whose output another op reads (apart): each output as the
// reference computes it, in every precision this CPU runs.
TEST(CpuPlanHeads, SiblingHeadsComputedAsOneGiveEachHeadsOutputs) {
  using testing::conv_op;
  ConvGeometry up = ConvGeometry::symmetric(2, 1);
  up.output_pad_h = up.output_pad_w = 1;
  FusedGraph graph;
  FusedOp features = conv_op(FusedOp::Kind::conv, {24, 3, 3, 3}, ConvGeometry::symmetric(1, 1), 51);
  features.activation = 0.0F;
  graph.ops.push_back(features);
  const auto head = [&](std::int64_t outputs, const ConvGeometry& g, std::uint64_t seed) {
    FusedOp op = conv_op(FusedOp::Kind::conv_transpose, {24, outputs, 3, 3}, g, seed);
    op.name = "head" + std::to_string(seed);
    op.input = 0;
    return op;
  };
  graph.ops.push_back(head(4, up, 52));  // 1: with 2 and 4
  graph.ops.push_back(head(8, up, 53));  // 2
  graph.ops.push_back(head(3, up, 54));  // 3: with a ReLU, apart
  graph.ops.back().activation = 0.0F;
  graph.ops.push_back(head(5, up, 55));                             // 4
  graph.ops.push_back(head(6, ConvGeometry::symmetric(1, 1), 56));  // 5: another stride
  graph.ops.push_back(head(2, up, 57));                             // 6: read by 7
  FusedOp after = conv_op(FusedOp::Kind::conv, {3, 2, 1, 1}, ConvGeometry::symmetric(1, 0), 58);
  after.input = 6;
  graph.ops.push_back(after);
  graph.outputs = {1, 2, 3, 4, 5, 7};
  graph.output_names = {"a", "b", "c", "d", "e", "f"};
  expect_outputs_of_the_reference(graph, Shape{2, 3, 7, 9}, 59);
}

// A transposed convolution with few outputs per input channel runs as a 1x1 convolution into its
// columns and a gather of the taps: every stride, padding (uneven too), dilation, activation and
// output padding gives the reference's outputs; a wide one, its columns more than its input, runs
// as one oneDNN primitive and agrees too.
TEST(CpuPlanHeads, TransposedConvolutionsAsColumnsGiveTheReferenceOutputs) {
  using testing::conv_op;
  struct Case {
    const char* name;
    std::int64_t outputs, kernel;
    ConvGeometry geometry;
    float activation = -1.0F;
  };
  ConvGeometry head = ConvGeometry::symmetric(2, 1);
  head.output_pad_h = head.output_pad_w = 1;
  ConvGeometry uneven = ConvGeometry::symmetric(2, 0);
  uneven.pad_left = 1;
  uneven.pad_bottom = 1;
  ConvGeometry wide_strides = ConvGeometry::symmetric(1, 1, 2);
  wide_strides.stride_w = 3;
  const std::vector<Case> cases = {
      {"3x3 stride 2, output padding", 5, 3, head},
      {"4x4 stride 2", 3, 4, ConvGeometry::symmetric(2, 1)},
      {"3x3 stride 2, uneven padding, ReLU", 4, 3, uneven, 0.0F},
      {"3x3 dilation 2, strides 1 and 3, ReLU6", 2, 3, wide_strides, 6.0F},
      {"2x2 stride 2, no padding", 6, 2, ConvGeometry::symmetric(2, 0)},
      {"wide: 3x3 stride 2, more columns than inputs", 12, 3, head},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FusedGraph graph;
    FusedOp features =
        conv_op(FusedOp::Kind::conv, {48, 3, 3, 3}, ConvGeometry::symmetric(1, 1), 61);
    features.activation = 0.0F;
    graph.ops.push_back(features);
    FusedOp up =
        conv_op(FusedOp::Kind::conv_transpose, {48, c.outputs, c.kernel, c.kernel}, c.geometry, 62);
    up.input = 0;
    up.activation = c.activation;
    graph.ops.push_back(up);
    graph.outputs = {1};
    graph.output_names = {"maps"};
    expect_outputs_of_the_reference(graph, Shape{2, 3, 7, 10}, 63);
  }
}

}  // namespace
}  // namespace labpose::nets

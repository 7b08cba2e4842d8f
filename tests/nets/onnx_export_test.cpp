// ONNX export (nets/onnx) against onnxruntime from PyPI (tests/python/onnx_reference.py makes and
// reuses a virtualenv under the build folder): pose networks with seeded random weights and a
// hand-made graph with every op feature, on the same 8-bit frames as labpose's own plan, at two
// sizes and two batch sizes from one file (symbolic N, H, W); the decoded "pose" output against
// pipeline/pose/decode.cpp. Without Python: the file read back, and the errors for a missing folder
// and a damaged file.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/atomic_file.hpp"
#include "devices/devices.hpp"
#include "nets/fused_graph.hpp"
#include "nets/models/models.hpp"
#include "nets/npy.hpp"
#include "nets/onnx/onnx_export.hpp"
#include "nets/random.hpp"
#include "nets/ref/backend.hpp"
#include "pipeline/pose/decode.hpp"
#include "tests/nets/nets_test_support.hpp"
#include "tests/support/keypoint_oracle.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::nets {
namespace {
namespace fs = std::filesystem;
using testing::download;
using testing::max_abs;
using testing::random_values;

constexpr int kCannotInstall = 77;  // the script's exit status when PyPI cannot be reached

// Score maps and locref agree when max |onnxruntime - labpose| <= kRelative * max |labpose| (per
// output tensor); decoded positions to kPixels, likelihoods to kLikelihood.
constexpr double kRelative = 1e-4;
constexpr double kPixels = 0.01;
constexpr double kLikelihood = 1e-4;

// A batch of frames: (N, H, W, 3) RGB bytes.
struct Frames {
  std::string name;
  int batch = 1, height = 0, width = 0;
  std::vector<std::uint8_t> pixels;
};

// Smooth colour blobs plus noise, deterministic from `seed` (score maps with structure, not noise).
Frames make_frames(const std::string& name, int batch, int height, int width, std::uint64_t seed) {
  Random random(seed);
  Frames frames{name, batch, height, width, {}};
  for (int n = 0; n < batch; ++n) {
    const double cx = random.uniform() * width, cy = random.uniform() * height;
    const double radius = 4.0 + random.uniform() * 12.0;
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const double d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
        const double blob = 200.0 * std::exp(-d2 / (2.0 * radius * radius));
        for (int c = 0; c < 3; ++c) {
          const double value = 30.0 + blob * (0.5 + 0.25 * c) + 20.0 * random.uniform();
          frames.pixels.push_back(static_cast<std::uint8_t>(std::clamp(value, 0.0, 255.0)));
        }
      }
    }
  }
  return frames;
}

void write_frames(const Frames& frames, const fs::path& file) {
  write_npy({{frames.batch, frames.height, frames.width, 3},
             std::vector<float>(frames.pixels.begin(), frames.pixels.end())},
            file);
}

// Seeded weights of a plausible scale: every filter Kaiming-normal in fan-out mode (the head too,
// so that score maps have structure; DeepLabCut's std 0.001 would make them all but flat), random
// batch-norm scales, shifts and statistics.
void randomize(Net& net, std::uint64_t seed) {
  Random random(seed);
  for (const auto& parameter : net.parameters()) {
    const Shape& shape = parameter->shape;
    const std::string& name = parameter->name;
    std::vector<float> values(static_cast<std::size_t>(shape.elements()));
    for (float& v : values) {
      if (shape.rank() == 4) {
        v = static_cast<float>(
            random.normal() * std::sqrt(2.0 / static_cast<double>(shape[0] * shape[2] * shape[3])));
      } else if (name.ends_with(".running_var") || name.ends_with(".weight")) {
        v = static_cast<float>(0.5 + random.uniform());
      } else {
        v = static_cast<float>(0.2 * (random.uniform() - 0.5));  // biases, running means
      }
    }
    net.backend().copy_from_host(values.data(), parameter->value);
  }
}

// Scales the head "head.<name>" so that its largest output on `frames` is `target`: score maps of
// logits up to about 8 (likelihoods neither all 0.5 nor all 1) and offsets of at most a few cells,
// whatever scale the random backbone's features have.
void scale_head(Net& net, const std::string& name, std::size_t output, const Shape& input,
                const std::vector<std::uint8_t>& pixels, double target) {
  Backend& backend = net.backend();
  auto plan = backend.compile(net.fuse(true), input);
  Tensor x = backend.allocate(input);
  backend.copy_pixels_from_host(pixels.data(), x);
  const double factor = target / max_abs(download(backend, plan->run(x).at(output)));
  for (const char* part : {".weight", ".bias"}) {
    Parameter& parameter = *net.find_parameter("head." + name + part);
    std::vector<float> values = download(backend, parameter.value);
    for (float& v : values) v = static_cast<float>(v * factor);
    backend.copy_from_host(values.data(), parameter.value);
  }
}

// What a graph computes for a batch of frames: score maps, locref and the decoded keypoints.
struct PoseOutputs {
  Shape score_shape, locref_shape;
  std::vector<float> scoremap, locref;
  std::vector<float> pose;  // (N, J, 3): x, y, likelihood
};

// decode.cpp on every image of (N, J, P, Q) score maps and (N, 2J, P, Q) locref.
std::vector<float> decode(const std::vector<float>& scoremap, const std::vector<float>& locref,
                          const Shape& score_shape, const pipeline::DecodeSettings& settings) {
  const auto joints = static_cast<int>(score_shape.c()), height = static_cast<int>(score_shape.h()),
             width = static_cast<int>(score_shape.w());
  const std::size_t per_image = static_cast<std::size_t>(joints) *
                                static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  std::vector<pipeline::KeypointPrediction> keypoints(static_cast<std::size_t>(joints));
  std::vector<float> pose;
  for (std::int64_t n = 0; n < score_shape.n(); ++n) {
    const auto image = static_cast<std::size_t>(n);
    labpose::testing::decode_keypoints(scoremap.data() + image * per_image,
                                       locref.data() + image * 2 * per_image, joints, height, width,
                                       settings, keypoints.data());
    for (const auto& keypoint : keypoints) {
      pose.push_back(static_cast<float>(keypoint.x));
      pose.push_back(static_cast<float>(keypoint.y));
      pose.push_back(static_cast<float>(keypoint.likelihood));
    }
  }
  return pose;
}

// labpose's own answer, as PoseRunner computes it: the 8-bit frames into a plan, then decode.cpp.
PoseOutputs run_labpose(Backend& backend, const FusedGraph& graph, const Frames& frames,
                        const pipeline::DecodeSettings& settings) {
  const Shape input{frames.batch, 3, frames.height, frames.width};
  auto plan = backend.compile(graph, input);
  Tensor x = backend.allocate(input);
  backend.copy_pixels_from_host(frames.pixels.data(), x);
  const auto& outputs = plan->run(x);
  PoseOutputs result{outputs[0].shape(),
                     outputs[1].shape(),
                     download(backend, outputs[0]),
                     download(backend, outputs[1]),
                     {}};
  result.pose = decode(result.scoremap, result.locref, result.score_shape, settings);
  return result;
}

PoseOutputs read_onnxruntime_outputs(const fs::path& dir, const std::string& name) {
  const NpyArray score = read_npy(dir / (name + "_scoremap.npy"));
  const NpyArray locref = read_npy(dir / (name + "_locref.npy"));
  const NpyArray pose = read_npy(dir / (name + "_pose.npy"));
  return {Shape(score.shape), Shape(locref.shape), score.values, locref.values, pose.values};
}

double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(double{a[i]} - double{b[i]}));
  return worst;
}

// The largest differences between two (N, J, 3) poses: of x or y in pixels, of the likelihood.
struct PoseDifference {
  double pixels = 0.0, likelihood = 0.0;
  int ties = 0;  // keypoints left out: their best cells differ, but so little that either may win
};

// `skip(k)` says whether keypoint k (n * J + j) is a near tie that the comparison leaves out.
template <typename Skip>
PoseDifference pose_difference(const std::vector<float>& a, const std::vector<float>& b,
                               Skip skip) {
  PoseDifference difference;
  for (std::size_t k = 0; k + 2 < std::min(a.size(), b.size()); k += 3) {
    if (skip(k / 3)) {
      ++difference.ties;
      continue;
    }
    difference.pixels = std::max({difference.pixels, std::abs(double{a[k]} - double{b[k]}),
                                  std::abs(double{a[k + 1]} - double{b[k + 1]})});
    difference.likelihood =
        std::max(difference.likelihood, std::abs(double{a[k + 2]} - double{b[k + 2]}));
  }
  return difference;
}

// The first maximum of score map `keypoint` (n * J + j) of (N, J, P, Q) `scoremap`: its index in
// the map's plane.
std::size_t best_cell(const std::vector<float>& scoremap, std::size_t plane, std::size_t keypoint) {
  const auto first = scoremap.begin() + static_cast<std::ptrdiff_t>(keypoint * plane);
  return static_cast<std::size_t>(
      std::max_element(first, first + static_cast<std::ptrdiff_t>(plane)) - first);
}

// Compares onnxruntime's outputs for `frames` with labpose's; prints the figures.
void expect_agreement(const std::string& what, const PoseOutputs& ours, const PoseOutputs& theirs,
                      const pipeline::DecodeSettings& settings) {
  SCOPED_TRACE(what);
  ASSERT_EQ(theirs.score_shape, ours.score_shape);
  ASSERT_EQ(theirs.locref_shape, ours.locref_shape);
  const double score_scale = max_abs(ours.scoremap), locref_scale = max_abs(ours.locref);
  const double score_difference = max_abs_difference(theirs.scoremap, ours.scoremap);
  const double locref_difference = max_abs_difference(theirs.locref, ours.locref);
  EXPECT_LE(score_difference, kRelative * score_scale)
      << "scoremap (max |labpose| " << score_scale << ")";
  EXPECT_LE(locref_difference, kRelative * locref_scale)
      << "locref (max |labpose| " << locref_scale << ")";

  // The pose output is decode.cpp on onnxruntime's own maps: exact up to float rounding, ties
  // (first maximum) included.
  ASSERT_EQ(theirs.pose.size(), ours.pose.size());
  const PoseDifference in_graph = pose_difference(
      theirs.pose, decode(theirs.scoremap, theirs.locref, theirs.score_shape, settings),
      [](std::size_t) { return false; });
  EXPECT_LE(in_graph.pixels, kPixels) << "pose against decode.cpp on onnxruntime's maps";
  EXPECT_LE(in_graph.likelihood, kLikelihood) << "likelihood against decode.cpp";

  // Against labpose's keypoints: the same, except where the two runs pick different cells whose
  // scores (in labpose's maps) are within the score tolerance of each other.
  const auto plane = static_cast<std::size_t>(ours.score_shape.h() * ours.score_shape.w());
  const PoseDifference end_to_end = pose_difference(theirs.pose, ours.pose, [&](std::size_t k) {
    const std::size_t our_cell = best_cell(ours.scoremap, plane, k),
                      their_cell = best_cell(theirs.scoremap, plane, k);
    return our_cell != their_cell &&
           std::abs(double{ours.scoremap[k * plane + our_cell]} -
                    double{ours.scoremap[k * plane + their_cell]}) <= kRelative * score_scale;
  });
  EXPECT_LE(end_to_end.pixels, kPixels) << "pose against labpose's";
  EXPECT_LT(end_to_end.ties * 4, static_cast<int>(ours.pose.size() / 3)) << "too many near ties";
  EXPECT_LE(end_to_end.likelihood, kLikelihood) << "likelihood against labpose's";
  std::printf(
      "%s: scoremap %s max |difference| %.3g = %.3g of max |value| %.3g; locref %.3g = %.3g of "
      "%.3g; pose vs labpose %.3g px, likelihood %.3g (%d near ties left out); pose vs decode.cpp "
      "on onnxruntime's maps %.3g px, likelihood %.3g\n",
      what.c_str(), ours.score_shape.text().c_str(), score_difference,
      score_difference / std::max(score_scale, 1e-30), score_scale, locref_difference,
      locref_difference / std::max(locref_scale, 1e-30), locref_scale, end_to_end.pixels,
      end_to_end.likelihood, end_to_end.ties, in_graph.pixels, in_graph.likelihood);
}

// Runs onnx_reference.py on `model` for every batch of `frames` (written into `dir`).
::labpose::testing::CommandResult run_onnxruntime(const fs::path& model,
                                                  const std::vector<Frames>& frames,
                                                  const fs::path& dir,
                                                  const std::string& extra = "") {
  using ::labpose::testing::shell_quote;
  std::string command =
      "/usr/bin/python3 " +
      shell_quote((::labpose::testing::python_scripts_dir() / "onnx_reference.py").string()) +
      " --venv " + shell_quote(LABPOSE_TEST_VENV) + " --model " + shell_quote(model.string()) +
      " --out " + shell_quote(dir.string()) + extra;
  for (const Frames& batch : frames) {
    const fs::path file = dir / (batch.name + "_frames.npy");
    write_frames(batch, file);
    command += " --run " + shell_quote(batch.name + "=" + file.string());
  }
  return ::labpose::testing::run(command);
}

}  // namespace
}  // namespace labpose::nets

/// Skips the test when onnxruntime cannot be installed (no PyPI), or fails it where
/// LABPOSE_REQUIRE_INTEROP_PYTHON is set; fails it when the script fails otherwise.
#define LABPOSE_EXPECT_ONNXRUNTIME_RAN(result)                                               \
  do {                                                                                       \
    if ((result).exit_code == kCannotInstall) {                                              \
      if (std::getenv("LABPOSE_REQUIRE_INTEROP_PYTHON") != nullptr)                          \
        FAIL() << "onnxruntime must be installable here (LABPOSE_REQUIRE_INTEROP_PYTHON is " \
                  "set):\n"                                                                  \
               << (result).output;                                                           \
      GTEST_SKIP() << "PyPI is not reachable, so onnxruntime cannot be installed:\n"         \
                   << (result).output;                                                       \
    }                                                                                        \
    ASSERT_EQ((result).exit_code, 0) << (result).output;                                     \
  } while (false)

namespace labpose::nets {
namespace {

const pipeline::DecodeSettings kPoseDecoding{8, 7.2801, true};

OnnxExportOptions export_options(const pipeline::DecodeSettings& settings,
                                 const std::string& net_type) {
  OnnxExportOptions options;
  options.with_decoding = true;
  options.stride = settings.stride;
  options.locref_stdev = static_cast<float>(settings.locref_stdev);
  options.location_refinement = settings.location_refinement;
  options.producer_version = "0.1.0-test";
  options.metadata = {{"bodyparts", "snout,leftear,rightear"}, {"net_type", net_type}};
  return options;
}

class OnnxAgainstOnnxruntime : public ::testing::TestWithParam<std::string> {};

// One file per network, run at 64x80 and 96x128 with batches of 1 and 3.
TEST_P(OnnxAgainstOnnxruntime, ScoreMapsLocrefAndPoseAgreeWithLabpose) {
  const std::string architecture = GetParam();
  const ::labpose::testing::TempDir dir;
  auto backend = devices::make_backend("cpu");
  auto net = build_pose_net(*backend, {architecture, 3, true});
  const std::vector<Frames> frames = {
      make_frames("64x80_batch1", 1, 64, 80, 1), make_frames("64x80_batch3", 3, 64, 80, 2),
      make_frames("96x128_batch1", 1, 96, 128, 3), make_frames("96x128_batch3", 3, 96, 128, 4)};
  randomize(*net, 23);
  const Shape calibration{3, 3, 64, 80};
  scale_head(*net, "score", 0, calibration, frames[1].pixels, 8.0);
  scale_head(*net, "locref", 1, calibration, frames[1].pixels, 1.5);
  const FusedGraph graph = net->fuse(true);
  const fs::path model = dir / "model.onnx";
  write_onnx(graph, model, export_options(kPoseDecoding, architecture));

  const auto result = run_onnxruntime(model, frames, dir.path());
  LABPOSE_EXPECT_ONNXRUNTIME_RAN(result);
  std::printf("%s", result.output.c_str());
  for (const Frames& batch : frames) {
    expect_agreement(architecture + " " + batch.name,
                     run_labpose(*backend, graph, batch, kPoseDecoding),
                     read_onnxruntime_outputs(dir.path(), batch.name), kPoseDecoding);
  }
}

INSTANTIATE_TEST_SUITE_P(Backbones, OnnxAgainstOnnxruntime,
                         ::testing::Values("resnet_50", "mobilenet_v2_0.35", "efficientnet_lite0"),
                         [](const ::testing::TestParamInfo<std::string>& parameter) {
                           std::string name = parameter.param;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

// Weights uniform in +-scale, biases in +-0.2.
FusedOp conv_op(const std::string& name, int input, Shape weight_shape, ConvGeometry geometry,
                std::uint64_t seed, double scale = 0.4) {
  FusedOp op;
  op.kind = FusedOp::Kind::conv;
  op.name = name;
  op.input = input;
  op.weights = random_values(weight_shape.elements(), seed, scale);
  op.weight_shape = weight_shape;
  const std::int64_t outputs = weight_shape[0];
  op.bias = random_values(outputs, seed + 1, 0.2);
  op.geometry = geometry;
  return op;
}

// A geometry with a different value for every field a swap of height and width, or of the
// order of the pads, would confuse.
ConvGeometry geometry(int stride_h, int stride_w, std::array<int, 4> pads, int dilation_h,
                      int dilation_w, int groups) {
  ConvGeometry g;
  g.stride_h = stride_h;
  g.stride_w = stride_w;
  g.pad_top = pads[0];
  g.pad_left = pads[1];
  g.pad_bottom = pads[2];
  g.pad_right = pads[3];
  g.dilation_h = dilation_h;
  g.dilation_w = dilation_w;
  g.groups = groups;
  return g;
}

// A small graph with every feature of every op that generic_plan.cpp interprets, each made
// asymmetric where it can be: normalization; a stride-(2, 1) convolution padded (0, 1, 2, 0) with
// a ReLU6; a depthwise convolution dilated (2, 1) with a ReLU; a residual add followed by a ReLU;
// max pooling padded (1, 0, 2, 1); a grouped 3x1 convolution of stride (1, 2) capped at 4.5; two
// transposed convolutions (one grouped) with output padding. Overall stride 2. The weights of the
// capped convolutions are large enough for the caps to bind. Score map 0 is
// constant (zero filter and bias): every cell ties, and the first one must win.
FusedGraph every_op_graph() {
  FusedGraph graph;
  FusedOp normalize;
  normalize.kind = FusedOp::Kind::normalize;
  normalize.name = "normalize";
  normalize.scale = {1.0F / 58.0F, 1.0F / 57.0F, 1.0F / 57.5F};
  normalize.shift = {-2.1F, -2.0F, -1.8F};
  graph.ops.push_back(normalize);

  graph.ops.push_back(
      conv_op("stem", 0, Shape{8, 3, 3, 3}, geometry(2, 1, {0, 1, 2, 0}, 1, 1, 1), 10, 2.0));
  graph.ops.back().activation = 6.0F;
  graph.ops.push_back(
      conv_op("depthwise", 1, Shape{8, 1, 3, 3}, geometry(1, 1, {2, 1, 2, 1}, 2, 1, 8), 20));
  graph.ops.back().activation = 0.0F;
  graph.ops.push_back(conv_op("project", 2, Shape{8, 8, 1, 1}, ConvGeometry::symmetric(1, 0), 30));
  graph.ops.back().residual = 1;
  graph.ops.back().activation_after_residual = 0.0F;
  FusedOp pool;
  pool.kind = FusedOp::Kind::max_pool;
  pool.name = "pool";
  pool.input = 3;
  pool.pool.pad_top = 1;
  pool.pool.pad_left = 0;
  pool.pool.pad_bottom = 2;
  pool.pool.pad_right = 1;
  graph.ops.push_back(pool);
  graph.ops.push_back(
      conv_op("grouped", 4, Shape{16, 4, 3, 1}, geometry(1, 2, {1, 0, 1, 0}, 1, 1, 2), 40, 1.0));
  graph.ops.back().activation = 4.5F;

  ConvGeometry up = ConvGeometry::symmetric(2, 1);
  up.output_pad_h = up.output_pad_w = 1;
  FusedOp score = conv_op("head.score", 5, Shape{16, 2, 3, 3}, up, 50);
  score.kind = FusedOp::Kind::conv_transpose;
  for (std::size_t c = 0; c < 16; ++c)
    std::fill_n(score.weights.begin() + static_cast<std::ptrdiff_t>(c * 18), 9, 0.0F);
  score.bias = {0.0F, 0.1F};
  graph.ops.push_back(score);
  ConvGeometry grouped_up = up;
  grouped_up.groups = 2;
  FusedOp locref = conv_op("head.locref", 5, Shape{16, 2, 3, 3}, grouped_up, 60);
  locref.kind = FusedOp::Kind::conv_transpose;
  locref.bias = random_values(4, 61, 0.2);
  graph.ops.push_back(locref);
  graph.outputs = {6, 7};
  graph.output_names = {"scoremap", "locref"};
  return graph;
}

const pipeline::DecodeSettings kEveryOpDecoding{2, 7.2801, true};

TEST(OnnxExport, EveryOpAgreesWithTheReferencePlanAndADamagedFileIsRefused) {
  const ::labpose::testing::TempDir dir;
  const FusedGraph graph = every_op_graph();
  const fs::path model = dir / "every_op.onnx";
  write_onnx(graph, model, export_options(kEveryOpDecoding, "every_op"));
  const std::string bytes = read_file(model);
  write_file_atomically(dir / "truncated.onnx",
                        std::string_view(bytes).substr(0, bytes.size() / 2));

  // Odd sizes: the asymmetric padding and the pooling windows at the border matter.
  const std::vector<Frames> frames = {make_frames("37x29_batch2", 2, 37, 29, 5),
                                      make_frames("24x40_batch1", 1, 24, 40, 6)};
  const auto result = run_onnxruntime(
      model, frames, dir.path(),
      " --expect-invalid " + ::labpose::testing::shell_quote((dir / "truncated.onnx").string()));
  LABPOSE_EXPECT_ONNXRUNTIME_RAN(result);
  std::printf("%s", result.output.c_str());
  ref::RefBackend reference;
  for (const Frames& batch : frames) {
    const PoseOutputs ours = run_labpose(reference, graph, batch, kEveryOpDecoding);
    const PoseOutputs theirs = read_onnxruntime_outputs(dir.path(), batch.name);
    expect_agreement("every op " + batch.name, ours, theirs, kEveryOpDecoding);
    // Bodypart 0 ties everywhere: the first cell (0, 0) and its own offset, likelihood 0.5.
    const std::size_t plane = static_cast<std::size_t>(ours.score_shape.h() * ours.score_shape.w());
    for (std::int64_t n = 0; n < ours.score_shape.n(); ++n) {
      const auto image = static_cast<std::size_t>(n);
      const float* pose = theirs.pose.data() + image * 6;
      const float* locref = ours.locref.data() + image * 4 * plane;
      EXPECT_NEAR(pose[0], 1.0 + locref[0] * 7.2801, kPixels) << batch.name << " image " << n;
      EXPECT_NEAR(pose[1], 1.0 + locref[plane] * 7.2801, kPixels) << batch.name << " image " << n;
      EXPECT_FLOAT_EQ(pose[2], 0.5F);
    }
  }
}

TEST(OnnxExport, TheFileReadsBackWithItsInputsOutputsAndMetadata) {
  const ::labpose::testing::TempDir dir;
  const fs::path model = dir / "model.onnx";
  write_onnx(every_op_graph(), model, export_options(kEveryOpDecoding, "every_op"));
  const OnnxModelInfo info = read_onnx_info(model);
  EXPECT_EQ(info.opset, kOnnxOpset);
  EXPECT_GE(info.ir_version, 8);
  EXPECT_EQ(info.producer_name, "labpose");
  EXPECT_EQ(info.producer_version, "0.1.0-test");
  EXPECT_EQ(info.inputs, std::vector<std::string>{"frames"});
  EXPECT_EQ(info.outputs, (std::vector<std::string>{"scoremap", "locref", "pose"}));
  EXPECT_EQ(info.metadata.at("bodyparts"), "snout,leftear,rightear");
  EXPECT_EQ(info.metadata.at("net_type"), "every_op");
  EXPECT_EQ(info.metadata.at("stride"), "2");
  EXPECT_EQ(info.metadata.at("locref_stdev"), "7.2801");
  EXPECT_EQ(info.metadata.at("location_refinement"), "true");

  // Without decoding: the network's outputs only.
  OnnxExportOptions plain;
  write_onnx(every_op_graph(), model, plain);
  EXPECT_EQ(read_onnx_info(model).outputs, (std::vector<std::string>{"scoremap", "locref"}));
}

TEST(OnnxExport, AMissingFolderIsAClearErrorAndLeavesNoFile) {
  const ::labpose::testing::TempDir dir;
  const fs::path model = dir / "exported-models" / "model.onnx";
  const std::string error =
      ::labpose::testing::error_text([&] { write_onnx(every_op_graph(), model, {}); });
  EXPECT_TRUE(::labpose::testing::contains(error, "cannot write " + model.string())) << error;
  EXPECT_TRUE(::labpose::testing::contains(error, "does not exist")) << error;
  EXPECT_TRUE(::labpose::testing::contains(error, "hint: create the folder first")) << error;
  EXPECT_TRUE(fs::is_empty(dir.path())) << "no file and no temp file may be left";

  // And a folder that exists gets exactly the model, no temp file beside it.
  fs::create_directory(dir / "exported-models");
  write_onnx(every_op_graph(), model, {});
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir / "exported-models"))
    names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"model.onnx"});
}

TEST(OnnxExport, ATruncatedOrForeignFileIsRefusedByTheReader) {
  const ::labpose::testing::TempDir dir;
  const fs::path model = dir / "model.onnx";
  write_onnx(every_op_graph(), model, {});
  const std::string bytes = read_file(model);
  for (const std::size_t length : {bytes.size() / 2, bytes.size() - 1, std::size_t{100}}) {
    SCOPED_TRACE(length);
    const fs::path truncated = dir / "truncated.onnx";
    write_file_atomically(truncated, std::string_view(bytes).substr(0, length));
    const std::string error = ::labpose::testing::error_text([&] { read_onnx_info(truncated); });
    EXPECT_TRUE(
        ::labpose::testing::contains(error, truncated.string() + ": not a readable ONNX model"))
        << error;
    EXPECT_TRUE(::labpose::testing::contains(error, "truncated")) << error;
  }
  // Bytes that happen to parse as protobuf are still no model: the checker says what is missing.
  const fs::path empty = dir / "empty.onnx";
  write_file_atomically(empty, "");
  const std::string error = ::labpose::testing::error_text([&] { read_onnx_info(empty); });
  EXPECT_TRUE(::labpose::testing::contains(error, empty.string() + ": ONNX's checker rejects"))
      << error;
  const std::string missing =
      ::labpose::testing::error_text([&] { read_onnx_info(dir / "missing.onnx"); });
  EXPECT_TRUE(::labpose::testing::contains(missing, "no such file")) << missing;
}

}  // namespace
}  // namespace labpose::nets

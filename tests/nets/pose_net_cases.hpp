// Pose networks in states where two arithmetics can be compared: batch-norm statistics measured on
// the input (so every value is of order 1, as in a trained network), a short training run on
// synthetic disks that learns and stays well conditioned, and the cases of the half-precision plan
// test. Shared by the conformance suites (every backend against ref), the GPU tests and the CPU
// checks that the GPU tests' cases are well posed.
//
// Why: with initialize_pose_net alone, batch norm is the identity, MobileNetV2 and
// EfficientNet-Lite shrink their features to 1e-7 and their outputs to 1e-10 (below fp16's smallest
// value, so an fp16 plan returned zeros: relative error 1.0), and ResNet-101 reaches 4e5 (above
// fp16's largest). And training with batch statistics over 4x4 maps of 2 images divides by
// variances near 0: the reference and the CPU backend, both right, drifted apart by 2% at step 2
// and 11% at step 5.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nets/fused_graph.hpp"
#include "nets/layer.hpp"
#include "nets/models/models.hpp"
#include "nets/repeated_work.hpp"
#include "pipeline/training/targets.hpp"
#include "tests/nets/nets_test_support.hpp"

namespace labpose::nets::testing {

/// Training forwards of `x` until every batch norm's running statistics are (to 0.9^passes) those
/// of x's batch, as PyTorch's momentum 0.1 would after as many steps.
inline void calibrate_batch_norm(Net& net, const Tensor& x, int passes = 30) {
  for (int pass = 0; pass < passes; ++pass) net.forward(x, true);
}

/// Every batch norm of `net` frozen (running statistics in training too) or not.
inline void freeze_batch_norm(Net& net, bool frozen) {
  for (std::size_t node = 0; node < net.node_count(); ++node) {
    if (auto* norm = dynamic_cast<BatchNorm2d*>(&net.layer(static_cast<int>(node))))
      norm->set_frozen(frozen);
  }
}

/// `to` gets `from`'s parameters (and running statistics), by name; the nets may be on two
/// backends.
inline void copy_parameters(const Net& from, Net& to) {
  for (const auto& parameter : from.parameters()) {
    std::vector<float> values(static_cast<std::size_t>(parameter->shape.elements()));
    from.backend().copy_to_host(parameter->value, values.data());
    to.backend().copy_from_host(values.data(), to.find_parameter(parameter->name)->value);
  }
}

struct TrainingRun {
  std::vector<double> losses;           // per step, before its update
  std::vector<float> scoremap, locref;  // the evaluation outputs after the last step
};

/// `steps` SGD steps (rate `learning_rate`, momentum 0.9) of mobilenet_v2_0.35 with calibrated,
/// frozen batch norm on two 64x64 images with a bright disk per keypoint, DeepLabCut's loss and
/// targets. `after_step(step)` runs after each step (GPU tests read the memory pool there). With
/// `recorded`, forward and backward go through RepeatedWork, as the trainer's do.
inline TrainingRun train_on_disks(Backend& backend, int steps, float learning_rate = 0.01F,
                                  const std::function<void(int)>& after_step = {},
                                  bool recorded = false) {
  const Shape input{2, 3, 64, 64};
  const std::vector<float> keypoints = {20.0F, 24.0F, 44.0F, 40.0F, 30.0F, 10.0F, 12.0F, 50.0F};
  std::vector<float> pixels(static_cast<std::size_t>(input.elements()), 40.0F);
  for (std::int64_t n = 0; n < 2; ++n) {
    for (std::int64_t j = 0; j < 2; ++j) {
      const float x = keypoints[static_cast<std::size_t>((n * 2 + j) * 2)];
      const float y = keypoints[static_cast<std::size_t>((n * 2 + j) * 2 + 1)];
      for (std::int64_t c = 0; c < 3; ++c) {
        for (std::int64_t h = 0; h < 64; ++h) {
          for (std::int64_t w = 0; w < 64; ++w) {
            const float dx = static_cast<float>(w) - x, dy = static_cast<float>(h) - y;
            if (dx * dx + dy * dy < 25.0F)
              pixels[static_cast<std::size_t>(((n * 3 + c) * 64 + h) * 64 + w)] =
                  j == 0 ? 220.0F : static_cast<float>(100 + 50 * c);
          }
        }
      }
    }
  }
  auto net = build_pose_net(backend, {"mobilenet_v2_0.35", 2, true});
  initialize_pose_net(*net, 5);
  const Tensor x = upload(backend, input, pixels);
  calibrate_batch_norm(*net, x);
  freeze_batch_norm(*net, true);
  const auto shapes = net->output_shapes(input);
  // Targets from the training loader's host code (the same on every device), uploaded.
  const std::int64_t joints = 2, rows = shapes[0].h(), columns = shapes[0].w();
  const std::int64_t per_score = joints * rows * columns, per_locref = 2 * per_score;
  std::vector<float> score(static_cast<std::size_t>(shapes[0].elements())),
      locref(static_cast<std::size_t>(shapes[1].elements())), weights(locref.size());
  for (std::int64_t n = 0; n < 2; ++n) {
    double kx[2], ky[2];
    for (std::int64_t j = 0; j < joints; ++j) {
      kx[j] = keypoints[static_cast<std::size_t>((n * 2 + j) * 2)];
      ky[j] = keypoints[static_cast<std::size_t>((n * 2 + j) * 2 + 1)];
    }
    pipeline::build_targets(kx, ky, static_cast<int>(joints), static_cast<int>(rows),
                            static_cast<int>(columns), pipeline::TargetSettings{},
                            score.data() + n * per_score, locref.data() + n * per_locref,
                            weights.data() + n * per_locref);
  }
  const Tensor score_targets = upload(backend, shapes[0], score);
  const Tensor locref_targets = upload(backend, shapes[1], locref);
  const Tensor locref_weights = upload(backend, shapes[1], weights);
  Tensor ones = backend.allocate(shapes[0]);
  backend.fill(ones, 1.0F);
  std::vector<Tensor> gradients = {backend.allocate(shapes[0]), backend.allocate(shapes[1])};
  Tensor velocity = backend.allocate_flat(net->trainable_count());
  backend.fill(velocity, 0.0F);
  const auto cells = static_cast<double>(shapes[0].elements());
  TrainingRun run;
  RepeatedWork forward(backend, "the forward"), backward(backend, "the backward");
  for (int step = 0; step < steps; ++step) {
    if (recorded) {
      forward.run(0, [&] { net->forward(x, true); });
    } else {
      net->forward(x, true);
    }
    const auto& outputs = net->output_values();
    const double cross_entropy =
        backend.sigmoid_cross_entropy_forward(outputs[0], score_targets, ones);
    const double huber = backend.huber_forward(outputs[1], locref_targets, locref_weights, 1.0F);
    run.losses.push_back(cross_entropy / cells + 0.05 * huber);
    backend.sigmoid_cross_entropy_backward(outputs[0], score_targets, ones,
                                           static_cast<float>(1.0 / cells), gradients[0]);
    backend.huber_backward(outputs[1], locref_targets, locref_weights, 1.0F, 0.05F, gradients[1]);
    if (recorded) {
      backward.run(0, [&] { net->backward(gradients); });
    } else {
      net->backward(gradients);
    }
    backend.sgd_step(net->trainable_values(), net->trainable_gradients(), velocity,
                     {learning_rate, 0.9F, 0.0F});
    if (after_step) after_step(step);
  }
  const auto& outputs = net->forward(x, false);
  run.scoremap = download(backend, outputs[0]);
  run.locref = download(backend, outputs[1]);
  return run;
}

/// `actual` follows `expected` loss by loss (relative `per_step`) and in its outputs (relative L2
/// `outputs`), and the expected run learned.
inline void expect_same_run(const TrainingRun& actual, const TrainingRun& expected, double per_step,
                            double outputs) {
  ASSERT_EQ(actual.losses.size(), expected.losses.size());
  for (std::size_t step = 0; step < expected.losses.size(); ++step) {
    EXPECT_NEAR(actual.losses[step], expected.losses[step], per_step * expected.losses[step])
        << "step " << step;
  }
  EXPECT_LT(expected.losses.back(), 0.95 * expected.losses.front()) << "the run must learn";
  EXPECT_LT(relative_l2_error(actual.scoremap, expected.scoremap), outputs) << "score maps";
  EXPECT_LT(relative_l2_error(actual.locref, expected.locref), outputs) << "locref";
}

/// The half-precision plan test's case of one architecture: the fused graph of a network with 4
/// bodyparts and batch norm calibrated on the input, and that input (2 random 96x128 images).
struct HalfPrecisionCase {
  FusedGraph graph;
  Shape input{2, 3, 96, 128};
  std::vector<float> pixels;
};

inline HalfPrecisionCase half_precision_case(Backend& backend, const std::string& architecture) {
  HalfPrecisionCase c;
  c.pixels = random_values(c.input.elements(), 4, 127.0);
  auto net = build_pose_net(backend, {architecture, 4, true});
  initialize_pose_net(*net, 3);
  calibrate_batch_norm(*net, upload(backend, c.input, c.pixels));
  c.graph = net->fuse(true);
  return c;
}

}  // namespace labpose::nets::testing

// PoseRunner, the one "pixels -> plan -> keypoints" path: a batch gives each image the keypoints
// that the network run on that image alone and decoded as DeepLabCut does gives it (the oracle is
// written out here on the reference backend), only the images asked for are decoded, and
// ImagePredictor gives the same.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include "core/error.hpp"
#include "nets/fused_graph.hpp"
#include "nets/generic_plan.hpp"
#include "nets/models/models.hpp"
#include "nets/ref/backend.hpp"
#include "pipeline/pose/pose_runner.hpp"
#include "pipeline/pose/predict.hpp"
#include "tests/support/keypoint_oracle.hpp"

namespace labpose::pipeline {
namespace {

constexpr int kWidth = 64, kHeight = 48, kJoints = 4;

// Image `index`: dark, with a bright square at a place of its own (packed RGB).
std::vector<std::uint8_t> test_image(int index) {
  std::vector<std::uint8_t> rgb(std::size_t{kWidth} * kHeight * 3, 20);
  for (int y = 8 + 10 * index; y < 20 + 10 * index; ++y) {
    for (int x = 6 + 14 * index; x < 18 + 14 * index; ++x) {
      for (int c = 0; c < 3; ++c)
        rgb[(static_cast<std::size_t>(y) * kWidth + static_cast<std::size_t>(x)) * 3 +
            static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(200 + 20 * c);
    }
  }
  return rgb;
}

// The keypoints of one image by the network compiled for it alone, decoded on the host.
std::vector<KeypointPrediction> oracle_keypoints(nets::Backend& backend, const nets::Net& net,
                                                 const std::vector<std::uint8_t>& rgb,
                                                 const DecodeSettings& settings) {
  const nets::Shape shape{1, 3, kHeight, kWidth};
  const auto plan = backend.compile(net.fuse(true), shape);
  nets::Tensor input = backend.allocate(shape);
  backend.copy_pixels_from_host(rgb.data(), input);
  const auto& outputs = plan->run(input);
  std::vector<float> score(static_cast<std::size_t>(outputs[0].elements()));
  std::vector<float> locref(static_cast<std::size_t>(outputs[1].elements()));
  backend.copy_to_host(outputs[0], score.data());
  backend.copy_to_host(outputs[1], locref.data());
  const nets::Shape& s = outputs[0].shape();
  std::vector<KeypointPrediction> keypoints(kJoints);
  testing::decode_keypoints(score.data(), locref.data(), kJoints, static_cast<int>(s.h()),
                            static_cast<int>(s.w()), settings, keypoints.data());
  return keypoints;
}

void expect_same(const KeypointPrediction& actual, const KeypointPrediction& expected,
                 const std::string& what) {
  EXPECT_EQ(actual.x, expected.x) << what;
  EXPECT_EQ(actual.y, expected.y) << what;
  EXPECT_EQ(actual.likelihood, expected.likelihood) << what;
}

TEST(PoseRunner, EachImageOfABatchGetsTheKeypointsOfItsOwnRun) {
  nets::ref::RefBackend backend;
  auto net = nets::build_pose_net(backend, {"mobilenet_v2_0.35", kJoints, true});
  nets::initialize_pose_net(*net, 5);
  const DecodeSettings settings{8, 7.2801, true};

  // A batch of 4 with 3 images in it: the fourth slot holds stale pixels, as a partial last batch
  // of a video does.
  PoseRunner runner(backend, *net, settings, 4, kHeight, kWidth);
  EXPECT_EQ(runner.batch_size(), 4);
  EXPECT_EQ(runner.joints(), kJoints);
  std::vector<std::uint8_t> pixels;
  for (int i = 0; i < 4; ++i) {
    const auto image = test_image(i % 3);
    pixels.insert(pixels.end(), image.begin(), image.end());
  }
  std::vector<KeypointPrediction> out(4 * kJoints, KeypointPrediction{-1.0, -1.0, -1.0});
  runner.run(pixels.data(), 3, out.data());

  ImagePredictor predictor(backend, *net, settings);
  for (int i = 0; i < 3; ++i) {
    const auto image = test_image(i);
    const auto expected = oracle_keypoints(backend, *net, image, settings);
    cv::Mat mat(kHeight, kWidth, CV_8UC3, const_cast<std::uint8_t*>(image.data()));
    const auto predicted = predictor.predict(mat);
    ASSERT_EQ(predicted.size(), std::size_t{kJoints});
    for (std::size_t j = 0; j < kJoints; ++j) {
      const std::string what = "image " + std::to_string(i) + " keypoint " + std::to_string(j);
      expect_same(out[static_cast<std::size_t>(i) * kJoints + j], expected[j], "batch, " + what);
      expect_same(predicted[j], expected[j], "ImagePredictor, " + what);
    }
  }
  bool images_differ = false;
  for (std::size_t j = 0; j < kJoints; ++j)
    images_differ |= out[j].x != out[kJoints + j].x || out[j].y != out[kJoints + j].y;
  EXPECT_TRUE(images_differ) << "the test images must give different keypoints to tell them apart";
  for (std::size_t j = 3 * kJoints; j < 4 * kJoints; ++j)
    EXPECT_EQ(out[j].x, -1.0) << "only the images asked for are decoded";
}

// cuDNN's tensors hold at most 2^31 - 1 values: resnet_50 on 1080p frames holds 33.2 M values per
// frame in its first layers, so batch 65 would fail inside cuDNN; the batch is lowered to 64 with a
// line saying why, and a frame too large for even one is an error naming the size and a way out.
TEST(PoseRunner, BatchesAreCappedWhereTheDevicesTensorsCannotHoldThem) {
  nets::ref::RefBackend backend;
  auto net = nets::build_pose_net(backend, {"resnet_50", kJoints, true});
  const nets::FusedGraph graph = net->fuse(true);
  const std::int64_t cudnn = 2147483647;
  EXPECT_EQ(nets::largest_tensor_per_image(graph, nets::Shape{1, 3, 1080, 1920}), 64 * 540 * 960);
  EXPECT_EQ(batch_within_tensor_limit(graph, 64, 1080, 1920, cudnn, "cuda:0"), 64);
  EXPECT_EQ(batch_within_tensor_limit(graph, 128, 1080, 1920, cudnn, "cuda:0"), 64);
  EXPECT_EQ(batch_within_tensor_limit(graph, 128, 480, 640, cudnn, "cuda:0"), 128);
  EXPECT_EQ(batch_within_tensor_limit(graph, 4096, 1080, 1920,
                                      std::numeric_limits<std::int64_t>::max(), "cpu"),
            4096);
  try {
    batch_within_tensor_limit(graph, 1, 20000, 20000, cudnn, "cuda:0");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("20000x20000 frames are too large for cuda:0"),
              std::string::npos)
        << error.what();
    EXPECT_NE(error.hint().find("--device cpu"), std::string::npos) << error.hint();
  }
}

}  // namespace
}  // namespace labpose::pipeline

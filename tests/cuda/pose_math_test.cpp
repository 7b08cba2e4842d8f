// The pose kernels' arithmetic, run on the CPU: DeepLabCut's targets (DESIGN.md "Targets, loss,
// decoding"; dlc-format.md 4.5) written element by element as the kernel does, the peak
// comparison that makes a parallel argmax the row-major first maximum, decoding (4.7), and frame
// resizing against OpenCV's INTER_LINEAR. No GPU needed.
#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "cuda/pose_math.hpp"

namespace labpose::cuda {
namespace {

constexpr float kStride = 8.0F, kLocrefStdev = 7.2801F;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Maps {
  std::int64_t batch, joints, rows, columns;
  std::vector<float> score, locref, weights;  // as the kernel stores them (NHWC)
  float score_at(std::int64_t n, std::int64_t j, std::int64_t r, std::int64_t c) const {
    return score[static_cast<std::size_t>(((n * rows + r) * columns + c) * joints + j)];
  }
  float locref_at(std::int64_t n, std::int64_t channel, std::int64_t r, std::int64_t c) const {
    return locref[static_cast<std::size_t>(((n * rows + r) * columns + c) * 2 * joints + channel)];
  }
  float weight_at(std::int64_t n, std::int64_t channel, std::int64_t r, std::int64_t c) const {
    return weights[static_cast<std::size_t>(((n * rows + r) * columns + c) * 2 * joints + channel)];
  }
};

// The target kernel, element by element on the host.
Maps build(const std::vector<float>& keypoints, const std::vector<float>& radii,
           std::int64_t joints, std::int64_t rows, std::int64_t columns) {
  Maps maps{static_cast<std::int64_t>(radii.size()), joints, rows, columns, {}, {}, {}};
  const std::int64_t count = maps.batch * rows * columns * joints;
  maps.score.assign(static_cast<std::size_t>(count), -1.0F);
  maps.locref.assign(static_cast<std::size_t>(2 * count), -1.0F);
  maps.weights.assign(static_cast<std::size_t>(2 * count), -1.0F);
  const TargetMaps out{maps.score.data(), maps.locref.data(), maps.weights.data()};
  for (std::int64_t i = 0; i < count; ++i) {
    write_targets(i, keypoints.data(), radii.data(), out, joints, rows, columns, kStride,
                  kLocrefStdev);
  }
  return maps;
}

TEST(PoseTargets, DisksOfRadiusAroundVisibleKeypointsWithLocrefOffsets) {
  // Two images, three joints; joint 1 of image 0 is missing; image 1 has a larger radius.
  const std::vector<float> keypoints = {30.0F, 20.0F, kNaN,  kNaN,  100.5F, 7.25F,
                                        3.0F,  44.0F, 60.0F, 60.0F, 0.0F,   0.0F};
  const std::vector<float> radii = {17.0F, 17.0F * 1.25F};
  const Maps maps = build(keypoints, radii, 3, 8, 16);
  int positives = 0;
  for (std::int64_t n = 0; n < 2; ++n) {
    for (std::int64_t j = 0; j < 3; ++j) {
      const double x = keypoints[static_cast<std::size_t>((n * 3 + j) * 2)];
      const double y = keypoints[static_cast<std::size_t>((n * 3 + j) * 2 + 1)];
      for (std::int64_t r = 0; r < 8; ++r) {
        for (std::int64_t c = 0; c < 16; ++c) {
          // DESIGN.md: cell centre (c * 8 + 4, r * 8 + 4); positive within radius, inclusive.
          const double dx = x - (static_cast<double>(c) * 8.0 + 4.0);
          const double dy = y - (static_cast<double>(r) * 8.0 + 4.0);
          const double radius = radii[static_cast<std::size_t>(n)];
          const bool inside = !std::isnan(x) && dx * dx + dy * dy <= radius * radius;
          positives += inside ? 1 : 0;
          EXPECT_EQ(maps.score_at(n, j, r, c), inside ? 1.0F : 0.0F) << n << j << r << c;
          EXPECT_NEAR(maps.locref_at(n, 2 * j, r, c), inside ? dx / kLocrefStdev : 0.0, 1e-6);
          EXPECT_NEAR(maps.locref_at(n, 2 * j + 1, r, c), inside ? dy / kLocrefStdev : 0.0, 1e-6);
          EXPECT_EQ(maps.weight_at(n, 2 * j, r, c), inside ? 1.0F : 0.0F);
          EXPECT_EQ(maps.weight_at(n, 2 * j + 1, r, c), inside ? 1.0F : 0.0F);
        }
      }
    }
  }
  EXPECT_GT(positives, 20);  // the disks are really there (about 13 cells each)
}

TEST(PoseTargets, TheDiskBoundaryIsInclusiveAndMissingKeypointsAreNegativeEverywhere) {
  // Cell (0, 0) is centred at (4, 4); a keypoint exactly 17 px to its right is on the boundary.
  EXPECT_EQ(cell_target(21.0F, 4.0F, 0, 0, kStride, 17.0F, kLocrefStdev).score, 1.0F);
  EXPECT_EQ(cell_target(21.01F, 4.0F, 0, 0, kStride, 17.0F, kLocrefStdev).score, 0.0F);
  const CellTarget inside = cell_target(10.0F, 1.0F, 0, 0, kStride, 17.0F, kLocrefStdev);
  EXPECT_FLOAT_EQ(inside.dx, 6.0F / kLocrefStdev);
  EXPECT_FLOAT_EQ(inside.dy, -3.0F / kLocrefStdev);
  EXPECT_EQ(inside.locref_weight, 1.0F);
  for (const auto& [x, y] : {std::pair{kNaN, 4.0F}, std::pair{4.0F, kNaN},
                             std::pair{std::numeric_limits<float>::infinity(), 4.0F}}) {
    const CellTarget missing = cell_target(x, y, 0, 0, kStride, 17.0F, kLocrefStdev);
    EXPECT_EQ(missing.score, 0.0F);
    EXPECT_EQ(missing.locref_weight, 0.0F);
    EXPECT_EQ(missing.dx, 0.0F);
  }
}

// The block reduction of the peak kernel, in a given order of combination.
PeakCandidate reduce(std::vector<PeakCandidate> candidates) {
  if (candidates.empty()) return {-INFINITY, -1};
  while (candidates.size() > 1) {
    std::vector<PeakCandidate> next;
    for (std::size_t k = 0; k + 1 < candidates.size(); k += 2)
      next.push_back(peak_better(candidates[k + 1], candidates[k]) ? candidates[k + 1]
                                                                   : candidates[k]);
    if (candidates.size() % 2 == 1) next.push_back(candidates.back());
    candidates = next;
  }
  return candidates[0];
}

TEST(PosePeaks, AnyOrderOfComparisonsFindsTheRowMajorFirstMaximum) {
  std::mt19937 generator(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int cells = 1 + trial % 37;
    std::vector<PeakCandidate> candidates;
    std::uniform_int_distribution<int> level(0, 3);  // few distinct values: many ties
    for (int c = 0; c < cells; ++c) {
      const int v = level(generator);
      candidates.push_back({v == 0 && trial % 3 == 0 ? kNaN : static_cast<float>(v), c});
    }
    // numpy's argmax, NaN treated as the smallest value.
    std::int64_t expected = 0;
    for (int c = 1; c < cells; ++c) {
      const float best = std::isnan(candidates[static_cast<std::size_t>(expected)].value)
                             ? -INFINITY
                             : candidates[static_cast<std::size_t>(expected)].value;
      const float value = std::isnan(candidates[static_cast<std::size_t>(c)].value)
                              ? -INFINITY
                              : candidates[static_cast<std::size_t>(c)].value;
      if (value > best) expected = c;
    }
    std::shuffle(candidates.begin(), candidates.end(), generator);
    candidates.push_back({-INFINITY, cells});  // a thread that saw no cell
    EXPECT_EQ(reduce(candidates).index, expected) << "trial " << trial;
  }
}

TEST(PosePeaks, DecodingIsDeepLabCutsFormula) {
  // Row 3, column 5 of a 10-column map; dx, dy are raw locref outputs.
  const Keypoint k = decode_peak(3 * 10 + 5, 10, 0.0F, 0.5F, -0.25F, kStride, kLocrefStdev);
  EXPECT_FLOAT_EQ(k.x, 5 * 8 + 4 + 0.5F * 7.2801F);
  EXPECT_FLOAT_EQ(k.y, 3 * 8 + 4 - 0.25F * 7.2801F);
  EXPECT_FLOAT_EQ(k.likelihood, 0.5F);
  EXPECT_NEAR(decode_peak(0, 10, 2.0F, 0.0F, 0.0F, kStride, kLocrefStdev).likelihood,
              1.0 / (1.0 + std::exp(-2.0)), 1e-6);
}

TEST(PosePeaks, TargetsDecodeBackToTheirKeypoints) {
  const std::vector<float> keypoints = {37.3F, 21.9F, 90.0F, 50.5F, 5.0F, 60.0F};
  const std::vector<float> radii = {17.0F};
  const Maps maps = build(keypoints, radii, 3, 10, 14);
  for (std::int64_t j = 0; j < 3; ++j) {
    // Logits: confident where the target is 1; the peak kernel's scan and decoding.
    std::vector<float> logits(maps.score.size());
    for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = 10.0F * maps.score[i] - 5.0F;
    PeakCandidate best{-INFINITY, 140};
    for (std::int64_t cell = 0; cell < 140; ++cell) {
      const PeakCandidate candidate{logits[static_cast<std::size_t>(cell * 3 + j)], cell};
      if (peak_better(candidate, best)) best = candidate;
    }
    const Keypoint k = keypoint_at(logits.data(), maps.locref.data(), 0, j, best.index, 3, 10, 14,
                                   kStride, kLocrefStdev);
    EXPECT_NEAR(k.x, keypoints[static_cast<std::size_t>(2 * j)], 1e-3) << j;
    EXPECT_NEAR(k.y, keypoints[static_cast<std::size_t>(2 * j + 1)], 1e-3) << j;
    EXPECT_NEAR(k.likelihood, 1.0 / (1.0 + std::exp(-5.0)), 1e-6);
  }
}

// The frame kernel over a whole batch on the host: images (N, P, Q, 3).
std::vector<float> images_of(const std::vector<std::uint8_t>& frames, std::int64_t batch,
                             std::int64_t in_h, std::int64_t in_w, std::int64_t out_h,
                             std::int64_t out_w, const FrameAffine& affine) {
  std::vector<float> images(static_cast<std::size_t>(batch * out_h * out_w * 3));
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(images.size()); ++i) {
    images[static_cast<std::size_t>(i)] =
        image_element(i, frames.data(), in_h, in_w, out_h, out_w, affine);
  }
  return images;
}

TEST(PoseFrames, ResizingMatchesOpenCvsInterLinearAndChannelsBecomeRgb) {
  std::mt19937 generator(11);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::int64_t batch = 2, in_h = 37, in_w = 53;
  std::vector<std::uint8_t> frames(static_cast<std::size_t>(batch * in_h * in_w * 3));
  for (auto& v : frames) v = static_cast<std::uint8_t>(byte(generator));
  FrameAffine affine;
  affine.bgr = true;
  for (int c = 0; c < 3; ++c) {
    affine.scale[c] = 1.0F + 0.5F * static_cast<float>(c);
    affine.shift[c] = -100.0F * static_cast<float>(c);
  }
  for (const auto& [out_h, out_w] :
       {std::pair<std::int64_t, std::int64_t>{37, 53}, {20, 31}, {64, 80}, {37, 20}}) {
    SCOPED_TRACE(std::to_string(out_w) + "x" + std::to_string(out_h));
    const auto images = images_of(frames, batch, in_h, in_w, out_h, out_w, affine);
    for (std::int64_t n = 0; n < batch; ++n) {
      cv::Mat frame(static_cast<int>(in_h), static_cast<int>(in_w), CV_8UC3,
                    frames.data() + n * in_h * in_w * 3);
      cv::Mat as_float, resized;
      frame.convertTo(as_float, CV_32FC3);
      cv::resize(as_float, resized, cv::Size(static_cast<int>(out_w), static_cast<int>(out_h)), 0,
                 0, cv::INTER_LINEAR);
      double worst = 0.0;
      for (std::int64_t p = 0; p < out_h; ++p) {
        for (std::int64_t q = 0; q < out_w; ++q) {
          const cv::Vec3f bgr = resized.at<cv::Vec3f>(static_cast<int>(p), static_cast<int>(q));
          for (int c = 0; c < 3; ++c) {
            const float expected = bgr[2 - c] * affine.scale[c] + affine.shift[c];
            const float actual =
                images[static_cast<std::size_t>(((n * out_h + p) * out_w + q) * 3 + c)];
            worst = std::max(worst, std::abs(double{actual} - expected));
          }
        }
      }
      // Same size: an exact copy; resized: OpenCV's weights to float rounding.
      EXPECT_LE(worst, out_h == in_h && out_w == in_w ? 0.0 : 2e-3) << "image " << n;
    }
  }
}

}  // namespace
}  // namespace labpose::cuda

// Augmentation: affine warp + photometric changes.
#include "pipeline/training/augment.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>

namespace labpose::pipeline {

std::vector<int> flip_partners(const PoseConfig& config) {
  std::vector<int> partners(config.bodyparts.size());
  for (std::size_t j = 0; j < partners.size(); ++j) partners[j] = static_cast<int>(j);
  const auto index = [&](const std::string& name) {
    return static_cast<int>(std::find(config.bodyparts.begin(), config.bodyparts.end(), name) -
                            config.bodyparts.begin());
  };
  for (const auto& [left, right] : config.symmetric_pairs) {
    const int a = index(left), b = index(right);
    partners[static_cast<std::size_t>(a)] = b;
    partners[static_cast<std::size_t>(b)] = a;
  }
  if (!config.multi_animal()) return partners;
  // A multi-animal image's slots: every individual's bodyparts (dataset.hpp), "single" last.
  const std::size_t bodyparts = partners.size();
  const std::size_t individuals =
      config.individuals.size() + (config.unique_bodyparts.empty() ? 0 : 1);
  std::vector<int> slots(individuals * bodyparts);
  for (std::size_t i = 0; i < individuals; ++i) {
    for (std::size_t j = 0; j < bodyparts; ++j)
      slots[i * bodyparts + j] = static_cast<int>(i * bodyparts) + partners[j];
  }
  return slots;
}

AugmentedSample augment(const cv::Mat& rgb, const std::vector<double>& x,
                        const std::vector<double>& y, const PoseConfig& config,
                        const std::vector<int>& partners, nets::Random& random,
                        const CentreSlots& centre) {
  const auto uniform = [&](double low, double high) {
    return low + (high - low) * random.uniform();
  };
  const int width = config.crop_width, height = config.crop_height;
  const std::size_t joints = x.size();
  AugmentedSample sample;
  sample.scale = config.global_scale * uniform(config.scale_jitter_lo, config.scale_jitter_up);
  const double angle =
      random.uniform() < config.rotateratio ? uniform(-config.rotation, config.rotation) : 0.0;
  const bool flip = config.mirror && random.uniform() < 0.5;

  // The crop is centred on the labeled animal (`centre`'s keypoints), shifted by up to a quarter
  // of the crop each way.
  double cx = 0, cy = 0;
  int visible = 0;
  const std::size_t centre_end = std::min(joints, centre.first + std::min(centre.count, joints));
  for (std::size_t j = std::min(centre.first, joints); j < centre_end; ++j) {
    if (std::isnan(x[j]) || std::isnan(y[j])) continue;
    cx += x[j];
    cy += y[j];
    ++visible;
  }
  if (visible > 0) {
    cx /= visible;
    cy /= visible;
  } else {
    cx = rgb.cols / 2.0;
    cy = rgb.rows / 2.0;
  }
  const double shift_x = uniform(-width / 4.0, width / 4.0),
               shift_y = uniform(-height / 4.0, height / 4.0);

  // Source -> crop: rotate and scale about the animal, move it to the (shifted) crop centre.
  cv::Mat matrix = cv::getRotationMatrix2D(
      cv::Point2f(static_cast<float>(cx), static_cast<float>(cy)), angle, sample.scale);
  matrix.at<double>(0, 2) += width / 2.0 + shift_x - cx;
  matrix.at<double>(1, 2) += height / 2.0 + shift_y - cy;
  if (flip) {  // x' = (width - 1) - x'
    for (int k = 0; k < 3; ++k) matrix.at<double>(0, k) = -matrix.at<double>(0, k);
    matrix.at<double>(0, 2) += width - 1;
  }
  cv::Mat crop;
  cv::warpAffine(rgb, crop, matrix, cv::Size(width, height), cv::INTER_LINEAR, cv::BORDER_CONSTANT,
                 cv::Scalar(0, 0, 0));

  sample.x.assign(joints, std::nan(""));
  sample.y.assign(joints, std::nan(""));
  for (std::size_t j = 0; j < joints; ++j) {
    if (std::isnan(x[j]) || std::isnan(y[j])) continue;
    const double px =
        matrix.at<double>(0, 0) * x[j] + matrix.at<double>(0, 1) * y[j] + matrix.at<double>(0, 2);
    const double py =
        matrix.at<double>(1, 0) * x[j] + matrix.at<double>(1, 1) * y[j] + matrix.at<double>(1, 2);
    if (px < 0 || py < 0 || px > width - 1 || py > height - 1) continue;
    const auto target = static_cast<std::size_t>(flip ? partners[j] : static_cast<int>(j));
    sample.x[target] = px;
    sample.y[target] = py;
  }

  // Photometric changes, in float, then back to 8 bits.
  cv::Mat pixels;
  crop.convertTo(pixels, CV_32FC3);
  const double gain = 1.0 + uniform(-config.contrast, config.contrast);
  const double offset = 255.0 * uniform(-config.brightness, config.brightness);
  pixels = pixels * gain + cv::Scalar::all(offset + 127.5 * (1.0 - gain));
  if (random.uniform() < config.blur_probability) {
    const double sigma = uniform(0.5, 1.5);
    cv::GaussianBlur(pixels, pixels, cv::Size(0, 0), sigma);
  }
  if (random.uniform() < config.noise_probability) {
    cv::Mat noise(pixels.size(), pixels.type());
    auto* n = noise.ptr<float>();
    for (std::size_t i = 0; i < noise.total() * 3; ++i)
      n[i] = static_cast<float>(config.noise_stddev * random.normal());
    pixels += noise;
  }
  cv::Mat out;
  pixels.convertTo(out, CV_8UC3);  // saturating
  sample.pixels.assign(out.ptr<std::uint8_t>(), out.ptr<std::uint8_t>() + out.total() * 3);
  return sample;
}

}  // namespace labpose::pipeline

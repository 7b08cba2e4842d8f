// The int8 check file: JSON naming the snapshot (size, SHA-256), the frames and videos, the bounds
// and the shifts, written atomically; anything else in its place is measured again.
#include "pipeline/analysis/int8_check.hpp"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <optional>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "devices/devices.hpp"
#include "pipeline/analysis/precision_comparison.hpp"
#include "pipeline/analysis/predictor.hpp"
#include "pipeline/analysis/stages.hpp"
#include "pipeline/analysis/video_list.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/pose/int8_calibration.hpp"
#include "pipeline/pose/predict.hpp"
#include "pipeline/pose/snapshot_document.hpp"
#include "pipeline/training/pose_config.hpp"
#include "pipeline/video/reader.hpp"
#include "projects/layout.hpp"
#include "projects/project.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "labpose int8 check";

bool plausible(const ShiftPercentiles& p) {
  return std::isfinite(p.median) && std::isfinite(p.p99) && p.median >= 0 && p.p99 >= p.median;
}

void read_shift(const json& document, KeypointShift& shift) {
  shift.confident = percentiles_from_json(document.at("confident"));
  shift.all = percentiles_from_json(document.at("all"));
  shift.likelihood_change = document.at("likelihood_change").get<double>();
}

json shift_json(const KeypointShift& shift) {
  return {{"confident", percentiles_json(shift.confident)},
          {"all", percentiles_json(shift.all)},
          {"likelihood_change", shift.likelihood_change}};
}

// The check in `file` when it was measured for this snapshot at this pcutoff; nullopt (and why)
// otherwise.
std::optional<Int8Check> read_check(const fs::path& file, const SnapshotIdentity& snapshot,
                                    double pcutoff, std::string& why_not) {
  const auto read = read_snapshot_document(file, kFormat, "check", snapshot, why_not);
  if (!read) return std::nullopt;
  const json& document = *read;
  if (!document.contains("video")) {
    why_not = "it was measured on the labeled frames alone, before the check read video frames";
    return std::nullopt;
  }
  try {
    Int8Check check;
    check.pcutoff = document.at("pcutoff").get<double>();
    if (check.pcutoff != pcutoff) {
      why_not = fmt::format("it was measured with pcutoff {}, config.yaml now says {}",
                            check.pcutoff, pcutoff);
      return std::nullopt;
    }
    check.images = document.at("images").get<std::size_t>();
    read_shift(document, check.shift);
    const json& video = document.at("video");
    check.video_frames = video.at("frames").get<std::size_t>();
    for (const json& entry : video.at("videos")) {
      check.videos.push_back(
          {entry.at("file").get<std::string>(), entry.at("bytes").get<std::uintmax_t>()});
    }
    read_shift(video, check.video_shift);
    if (!plausible(check.shift.confident) || !plausible(check.shift.all) ||
        !plausible(check.video_shift.confident) || !plausible(check.video_shift.all)) {
      why_not = "it is damaged";
      return std::nullopt;
    }
    return check;
  } catch (const json::exception&) {
    why_not = "it is damaged";
    return std::nullopt;
  }
}

void write_check(const fs::path& file, const SnapshotIdentity& snapshot, const Int8Check& check) {
  json videos = json::array();
  for (const CheckedVideo& video : check.videos)
    videos.push_back({{"file", video.file}, {"bytes", video.bytes}});
  json document = {
      {"method",
       "int8 against fp32 on the CPU, over the shuffle's labeled frames and over frames of the "
       "project's videos; confident: keypoints with likelihood >= pcutoff in fp32"},
      {"images", check.images},
      {"pcutoff", check.pcutoff},
      {"bounds", {{"median_px", kInt8MedianShiftBound}, {"p99_px", kInt8P99ShiftBound}}},
      {"passed", check.passed()}};
  document.update(shift_json(check.shift));
  document["video"] = shift_json(check.video_shift);
  document["video"]["frames"] = check.video_frames;
  document["video"]["videos"] = videos;
  write_snapshot_document(file, kFormat, snapshot, document);
}

std::vector<CheckedVideo> identify_videos(const std::vector<fs::path>& videos) {
  std::vector<CheckedVideo> identities;
  for (const fs::path& video : videos) {
    std::error_code error;
    const std::uintmax_t bytes = fs::file_size(video, error);
    identities.push_back({video.filename().string(), error ? 0 : bytes});
  }
  return identities;
}

// A video of the check and its frame count.
struct CountedVideo {
  fs::path file;
  std::int64_t frames = 0;
};

// The video's reader, cropped as analysis crops; nullptr, with a warning, where it does not open.
std::unique_ptr<VideoReader> open_video(const fs::path& video, const AnalysisModel& model) {
  try {
    return std::make_unique<VideoReader>(
        video, VideoReaderOptions(PixelOrder::rgb, crop_region(model.crop), 1));
  } catch (const Error& error) {
    if (error.kind() == ErrorKind::interrupted) throw;
    console::warn("int8 check: leaving out {} ({})", video.string(), error.what());
    return nullptr;
  }
}

// The videos that open and their frame counts, each opened and closed in turn (a project may
// have many videos; only one is open at a time).
std::vector<CountedVideo> count_frames(const std::vector<fs::path>& videos,
                                       const AnalysisModel& model) {
  std::vector<CountedVideo> counted;
  for (const fs::path& video : videos) {
    if (const auto reader = open_video(video, model))
      counted.push_back({video, reader->frame_count()});
  }
  return counted;
}

// The video holding frame `position` of the videos together (counted over all their frames in
// order), and the frame's index in it.
std::pair<std::size_t, std::int64_t> frame_at(const std::vector<CountedVideo>& videos,
                                              std::int64_t position) {
  for (std::size_t v = 0; v < videos.size(); ++v) {
    if (position < videos[v].frames) return {v, position};
    position -= videos[v].frames;
  }
  LABPOSE_ASSERT(false);
  return {0, 0};
}

// The keypoints of the labeled images, then of frames spread evenly over the videos (the middle
// frame of each of as many equal stretches), in fp32 and in int8, image by image.
Int8Check measure(const AnalysisModel& model, const std::vector<fs::path>& images,
                  const std::vector<fs::path>& videos) {
  const auto fp32 = devices::make_backend("cpu", nets::PlanPrecision::fp32);
  const auto int8 = devices::make_backend("cpu", nets::PlanPrecision::int8);
  const auto fp32_net = load_model_network(*fp32, model);
  const auto int8_net = load_model_network(*int8, model);  // calibrates, once per snapshot
  const DecodeSettings settings{model.stride, model.locref_stdev, model.location_refinement};
  ImagePredictor fp32_predictor(*fp32, *fp32_net, settings);
  ImagePredictor int8_predictor(*int8, *int8_net, settings);
  const std::vector<CountedVideo> counted = count_frames(videos, model);
  std::int64_t video_total = 0;
  for (const CountedVideo& video : counted) video_total += video.frames;
  const std::size_t count = std::min(images.size(), kInt8CheckImages);
  const auto frames = std::min(static_cast<std::int64_t>(kInt8CheckVideoFrames), video_total);
  Progress progress("int8 check", static_cast<std::int64_t>(count) + frames, "frames");
  std::vector<std::vector<KeypointPrediction>> reference, other, video_reference, video_other;
  for (std::size_t k = 0; k < count; ++k) {
    const cv::Mat rgb = load_rgb_image(images[k * images.size() / count]);  // evenly spread
    reference.push_back(fp32_predictor.predict(rgb));
    other.push_back(int8_predictor.predict(rgb));
    progress.advance();
  }
  // The frames come in order, so one video is open at a time.
  std::unique_ptr<VideoReader> reader;
  std::size_t open = counted.size();  // which video `reader` reads
  for (std::int64_t k = 0; k < frames; ++k) {
    const auto [v, index] = frame_at(counted, (2 * k + 1) * video_total / (2 * frames));
    if (v != open) {
      reader = open_video(counted[v].file, model);
      open = v;
    }
    if (reader) {
      cv::Mat rgb(reader->height(), reader->width(), CV_8UC3);
      reader->seek(index);
      const auto read = reader->read(rgb.data, rgb.step[0]);
      if (read && read->status != FrameStatus::undecodable) {
        video_reference.push_back(fp32_predictor.predict(rgb));
        video_other.push_back(int8_predictor.predict(rgb));
      }
    }
    progress.advance();
  }
  Int8Check check;
  check.images = count;
  check.pcutoff = model.pcutoff;
  check.shift = keypoint_shift(reference, other, model.pcutoff);
  check.video_frames = video_reference.size();
  check.videos = identify_videos(videos);
  if (!video_reference.empty())
    check.video_shift = keypoint_shift(video_reference, video_other, model.pcutoff);
  return check;
}

bool within_bounds(const ShiftPercentiles& shift) {
  return shift.median <= kInt8MedianShiftBound && shift.p99 <= kInt8P99ShiftBound;
}

}  // namespace

bool Int8Check::passed() const {
  return shift.confident.keypoints > 0 && within_bounds(shift.confident) &&
         (video_shift.confident.keypoints == 0 || within_bounds(video_shift.confident));
}

std::string Int8Check::text() const {
  if (shift.confident.keypoints == 0) {
    return fmt::format("no keypoint reached pcutoff ({}) in fp32 on {} labeled frame{}", pcutoff,
                       images, images == 1 ? "" : "s");
  }
  std::string text = fmt::format(
      "moved {:.2f} px (median) and {:.2f} px (99th percentile) over the {} keypoints with "
      "likelihood >= pcutoff ({}) on {} labeled frame{}",
      shift.confident.median, shift.confident.p99, shift.confident.keypoints, pcutoff, images,
      images == 1 ? "" : "s");
  const std::string on_videos =
      fmt::format("{} frame{} of the project's video{}", video_frames, video_frames == 1 ? "" : "s",
                  videos.size() == 1 ? "" : "s");
  if (video_frames > 0 && video_shift.confident.keypoints == 0) {
    text += fmt::format(", and none reached pcutoff on {}", on_videos);
  } else if (video_frames > 0) {
    text +=
        fmt::format(", and {:.2f} px and {:.2f} px over the {} on {}", video_shift.confident.median,
                    video_shift.confident.p99, video_shift.confident.keypoints, on_videos);
  }
  return text;
}

fs::path int8_check_file(const fs::path& snapshot) {
  return fs::path(snapshot).concat(".int8-check.json");
}

std::vector<fs::path> int8_check_images(const AnalysisModel& model) {
  if (model.project.empty()) return {};
  const PoseConfig pose = read_pose_config(projects::pose_cfg_in(model.snapshot.parent_path()));
  const Split split = read_split(model.project / pose.split);
  std::vector<fs::path> images;
  for (const auto* list : {&split.train, &split.test})
    for (const std::string& image : *list) images.push_back(model.project / image);
  return images;
}

std::vector<fs::path> int8_check_videos(const AnalysisModel& model) {
  if (model.project.empty()) return {};
  const auto config = projects::ProjectConfig::load(model.project / "config.yaml");
  std::vector<fs::path> videos;
  for (const projects::VideoSet& set : config.values().video_sets) {
    if (const auto path = projects::resolve_video(config, set.key)) videos.push_back(*path);
  }
  // DeepLabCut's example projects ship a placeholder key ("WILL BE AUTOMATICALLY UPDATED BY DEMO
  // CODE") beside their video: then the videos in the project's videos/ folder.
  const fs::path folder = model.project / "videos";
  if (videos.empty() && fs::is_directory(folder)) {
    try {
      videos = videos_to_analyze({folder}, 0, 1);
    } catch (const Error&) {
      // No video there.
    }
  }
  return videos;
}

Int8Check int8_check(const AnalysisModel& model) {
  return int8_check(model, {}, int8_check_videos(model));
}

Int8Check int8_check(const AnalysisModel& model, const std::vector<fs::path>& given_images,
                     const std::vector<fs::path>& videos) {
  const fs::path file = int8_check_file(model.snapshot);
  const SnapshotIdentity identity = identify_snapshot(model.snapshot);
  std::string why_not;
  if (auto check = read_check(file, identity, model.pcutoff, why_not)) {
    if (videos.empty() || check->videos == identify_videos(videos)) {
      console::info("int8 check: the result in {}", file.string());
      return std::move(*check);
    }
    why_not = "the project's videos changed";
  }
  const std::vector<fs::path> images =
      given_images.empty() ? int8_check_images(model) : given_images;
  if (images.empty()) {
    throw Error(fmt::format("{} cannot be checked in int8: {}", model.snapshot.filename().string(),
                            model.project.empty() ? "an exported model carries no labeled frames"
                                                  : "its shuffle has no labeled frames"),
                "analyze it in the project it was trained in, or choose --precision int8 after "
                "checking it yourself with labpose evaluate --precision int8");
  }
  console::info(
      "int8 check: comparing int8 with fp32 on {} labeled frame{} and on up to {} frames "
      "of the project's {} video{} ({}), once",
      std::min(images.size(), kInt8CheckImages), images.size() == 1 ? "" : "s",
      kInt8CheckVideoFrames, videos.size(), videos.size() == 1 ? "" : "s", why_not);
  const Int8Check check = measure(model, images, videos);
  try {
    write_check(file, identity, check);
    console::info("int8 check: wrote {}", file.string());
  } catch (const Error& error) {
    console::warn("int8 check: could not keep it ({}); it will be measured again next time",
                  error.what());
  }
  return check;
}

}  // namespace labpose::pipeline

// extract_frames: check every video, then per video pick frames (uniform or k-means) and write
// them as PNG files, undoing everything this call wrote if anything fails.
#include "pipeline/frames/extract.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "pipeline/frames/kmeans.hpp"
#include "pipeline/images/image_files.hpp"
#include "pipeline/video/probe.hpp"
#include "pipeline/video/reader.hpp"
#include "projects/config.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"
#include "projects/project.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
namespace {

// One video of the project, checked and ready to read.
struct VideoJob {
  std::string key;  // as in video_sets
  fs::path path;    // the file found for it
  std::string stem;
  fs::path folder;
  std::optional<PixelRect> crop;
  std::int64_t header_frames = 0;
  std::set<std::int64_t> existing;  // frames already in the folder (images or label rows)
};

bool matches(const std::string& key, const fs::path& path, const std::string& requested) {
  std::error_code error;
  return requested == key || requested == projects::video_stem(key) ||
         requested == projects::portable_file_name(key) ||
         (fs::exists(requested, error) && fs::equivalent(requested, path, error));
}

// Frames of `folder` that must not be picked again: img<index>.png files and label rows.
std::set<std::int64_t> existing_frames(const fs::path& folder) {
  std::set<std::int64_t> frames;
  std::error_code error;
  if (!fs::is_directory(folder, error)) return frames;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (const auto index = projects::frame_index_of_image(entry.path().filename().string()))
      frames.insert(*index);
  }
  for (const auto& scorer : projects::label_scorers(folder)) {
    const projects::LoadedLabels labels =
        projects::read_labels(projects::label_files(folder, scorer));
    for (std::size_t row = 0; row < labels.table.row_count(); ++row) {
      if (const auto index =
              projects::frame_index_of_image(projects::image_key(labels.table, row).image))
        frames.insert(*index);
    }
  }
  return frames;
}

std::vector<VideoJob> check_videos(const projects::ProjectConfig& config,
                                   const ExtractFramesOptions& options) {
  const auto& sets = config.values().video_sets;
  const projects::ProjectLayout layout(config.project_dir());
  if (sets.empty()) {
    throw Error(
        fmt::format("{} lists no videos (video_sets is empty)", config.file().string()),
        fmt::format("add videos first: labpose add-videos {} <video>...", config.file().string()));
  }
  std::vector<VideoJob> jobs;
  std::vector<bool> used(options.videos.size(), false);
  for (const auto& set : sets) {
    VideoJob job;
    job.key = set.key;
    const auto path = projects::resolve_video(config, set.key);
    bool wanted = options.videos.empty();
    for (std::size_t i = 0; i < options.videos.size(); ++i) {
      if (matches(set.key, path.value_or(fs::path()), options.videos[i])) used[i] = wanted = true;
    }
    if (!wanted) continue;
    if (!path) {
      throw Error(fmt::format("video {} (listed in {}) is not there, nor in the project's videos/ "
                              "folder",
                              set.key, config.file().string()),
                  "move the video back, or copy it into the project's videos/ folder");
    }
    job.path = *path;
    job.stem = projects::video_stem(set.key);
    job.folder = layout.labeled_data_folder(job.stem);
    const VideoInfo info = probe_video(job.path);
    job.header_frames = info.frame_count;
    if (options.crop && set.crop) {
      const projects::CropBox& box = *set.crop;
      if (box.x2 > info.width || box.y2 > info.height) {
        throw Error(
            fmt::format("the crop box \"{}\" of video {} in {} goes beyond its {}x{} frames",
                        box.text(), set.key, config.file().string(), info.width, info.height),
            fmt::format("use at most {}, {}, {}, {} (x1, x2, y1, y2)", 0, info.width, 0,
                        info.height));
      }
      job.crop = PixelRect{box.x1, box.y1, box.x2 - box.x1, box.y2 - box.y1};
    }
    job.existing = existing_frames(job.folder);
    jobs.push_back(std::move(job));
  }
  for (std::size_t i = 0; i < options.videos.size(); ++i) {
    if (!used[i]) {
      std::vector<std::string> stems;
      stems.reserve(sets.size());
      for (const auto& set : sets) stems.push_back(projects::video_stem(set.key));
      throw UsageError(fmt::format("{} is not a video of this project", options.videos[i]),
                       fmt::format("the project has: {}; add it with labpose add-videos",
                                   fmt::join(stems, ", ")));
    }
  }
  return jobs;
}

// Files and folders this call created, removed again unless the whole call succeeds.
class Undo {
 public:
  ~Undo() {
    if (committed_) return;
    std::error_code ignored;
    for (const auto& file : files_) fs::remove(file, ignored);
    for (const auto& folder : folders_) fs::remove(folder, ignored);  // only if now empty
  }
  void created_file(fs::path file) { files_.push_back(std::move(file)); }
  void created_folder(fs::path folder) { folders_.push_back(std::move(folder)); }
  void commit() { committed_ = true; }

 private:
  std::vector<fs::path> files_, folders_;
  bool committed_ = false;
};

std::uint64_t video_seed(std::uint64_t seed, const std::string& stem) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a of the stem: each video its own stream
  for (const char c : stem) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return seed ^ hash;
}

// Writes the frames of one video: reads each index (ascending) and saves it as a PNG.
class FrameWriter {
 public:
  FrameWriter(const VideoJob& job, VideoReader& reader, Undo& undo, ExtractedVideo& result)
      : job_(job), reader_(reader), undo_(undo), result_(result), buffer_(reader.frame_bytes()) {}

  /// Returns false when the frame cannot be decoded (recorded in result.undecodable).
  bool write(std::int64_t index) {
    reader_.seek(index);
    const auto read = reader_.read(buffer_.data());
    if (!read || read->status == FrameStatus::undecodable) {
      result_.undecodable.push_back(index);
      return false;
    }
    std::error_code error;
    if (!fs::is_directory(job_.folder, error)) {
      fs::create_directories(job_.folder, error);
      if (error) {
        throw Error(fmt::format("cannot create the folder {}: {}", job_.folder.string(),
                                describe_errno(error.value())),
                    "check that you may write to the project folder");
      }
      undo_.created_folder(job_.folder);
    }
    const fs::path file = job_.folder / projects::frame_image_name(index, result_.frame_count);
    LABPOSE_ASSERT(!fs::exists(file, error));  // existing frames were excluded from selection
    // The reader gives BGR.
    const cv::Mat frame(reader_.height(), reader_.width(), CV_8UC3, buffer_.data());
    write_file_atomically(file, encode_png(frame, ChannelOrder::bgr));
    undo_.created_file(file);
    result_.frames.push_back(index);
    return true;
  }

 private:
  const VideoJob& job_;
  VideoReader& reader_;
  Undo& undo_;
  ExtractedVideo& result_;
  std::vector<std::uint8_t> buffer_;
};

// DeepLabCut's uniform: distinct frames drawn at random; an undecodable one is replaced by the
// next draw.
void extract_uniform(std::vector<std::int64_t> candidates, int wanted, std::mt19937_64& random,
                     FrameWriter& writer, const std::string& stem) {
  for (std::size_t i = candidates.size(); i > 1; --i) {  // Fisher-Yates
    std::swap(candidates[i - 1], candidates[bounded_random(random(), i)]);
  }
  Progress progress("writing " + stem,
                    std::min<std::int64_t>(wanted, static_cast<std::int64_t>(candidates.size())),
                    "frames");
  std::size_t next = 0;
  int written = 0;
  while (written < wanted && next < candidates.size()) {
    const std::size_t take =
        std::min(candidates.size() - next, static_cast<std::size_t>(wanted - written));
    std::vector<std::int64_t> batch(candidates.begin() + static_cast<std::ptrdiff_t>(next),
                                    candidates.begin() + static_cast<std::ptrdiff_t>(next + take));
    next += take;
    std::sort(batch.begin(), batch.end());  // read forward through the video
    for (const std::int64_t index : batch) {
      if (writer.write(index)) {
        ++written;
        progress.advance();
      }
    }
  }
}

// DeepLabCut's kmeans: each candidate shrunk to `resize_width` columns (nearest neighbour), grey
// as the mean of the channels (or the three channels), the per-pixel mean removed; mini-batch
// k-means with k = wanted; one random member of each non-empty cluster.
std::vector<std::int64_t> select_kmeans(std::vector<std::int64_t> candidates, int wanted,
                                        const ExtractFramesOptions& options, VideoReader& reader,
                                        std::mt19937_64& random, ExtractedVideo& result) {
  const double ratio = static_cast<double>(options.cluster_resize_width) / reader.width();
  if (ratio > 1.0) {
    throw UsageError(
        fmt::format("--cluster-resize-width {} is wider than the {} px frames of video "
                    "{}",
                    options.cluster_resize_width, reader.width(), result.video.string()),
        fmt::format("use at most {}", reader.width()));
  }
  const int small_width = cvRound(reader.width() * ratio);
  const int small_height = std::max(1, cvRound(reader.height() * ratio));
  const int channels = options.cluster_color ? 3 : 1;
  const std::size_t columns = static_cast<std::size_t>(small_width) *
                              static_cast<std::size_t>(small_height) *
                              static_cast<std::size_t>(channels);
  const std::size_t limit = std::max<std::size_t>(static_cast<std::size_t>(wanted),
                                                  kClusterMemoryBytes / (columns * sizeof(float)));
  if (candidates.size() > limit) {  // a long video: evenly spaced candidates
    console::info("{}: clustering {} evenly spaced frames of {} (memory bound)", result.stem, limit,
                  candidates.size());
    std::vector<std::int64_t> spaced(limit);
    for (std::size_t i = 0; i < limit; ++i) spaced[i] = candidates[i * candidates.size() / limit];
    candidates = std::move(spaced);
  }
  result.candidates = static_cast<std::int64_t>(candidates.size());

  std::vector<float> features;
  features.reserve(candidates.size() * columns);
  std::vector<std::int64_t> decoded;
  std::vector<std::uint8_t> buffer(reader.frame_bytes());
  cv::Mat small;
  {
    Progress progress("reading " + result.stem, static_cast<std::int64_t>(candidates.size()),
                      "frames");
    for (const std::int64_t index : candidates) {
      reader.seek(index);
      const auto read = reader.read(buffer.data());
      progress.advance();
      if (!read || read->status == FrameStatus::undecodable) {
        result.undecodable.push_back(index);
        continue;
      }
      const cv::Mat frame(reader.height(), reader.width(), CV_8UC3, buffer.data());
      cv::resize(frame, small, cv::Size(small_width, small_height), 0, 0, cv::INTER_NEAREST);
      for (int y = 0; y < small.rows; ++y) {
        const std::uint8_t* row = small.ptr<std::uint8_t>(y);
        for (int x = 0; x < small.cols; ++x) {
          const std::uint8_t* pixel = row + 3 * static_cast<std::ptrdiff_t>(x);
          if (channels == 3) {
            features.insert(features.end(), {float(pixel[0]), float(pixel[1]), float(pixel[2])});
          } else {
            features.push_back((float(pixel[0]) + float(pixel[1]) + float(pixel[2])) / 3.0f);
          }
        }
      }
      decoded.push_back(index);
    }
  }
  if (decoded.size() <= static_cast<std::size_t>(wanted)) return decoded;

  std::vector<double> mean(columns, 0.0);
  for (std::size_t row = 0; row < decoded.size(); ++row) {
    for (std::size_t c = 0; c < columns; ++c)
      mean[c] += static_cast<double>(features[row * columns + c]);
  }
  for (std::size_t row = 0; row < decoded.size(); ++row) {
    for (std::size_t c = 0; c < columns; ++c) {
      features[row * columns + c] -=
          static_cast<float>(mean[c] / static_cast<double>(decoded.size()));
    }
  }
  KMeansOptions kmeans;
  kmeans.clusters = wanted;
  kmeans.batch_size = decoded.size() < 100 ? static_cast<int>(decoded.size() / 2) : 100;
  kmeans.seed = random();
  const std::vector<int> labels = minibatch_kmeans(features, decoded.size(), columns, kmeans);
  std::vector<std::vector<std::int64_t>> members(static_cast<std::size_t>(wanted));
  for (std::size_t row = 0; row < decoded.size(); ++row) {
    members[static_cast<std::size_t>(labels[row])].push_back(decoded[row]);
  }
  std::vector<std::int64_t> chosen;
  for (const auto& cluster : members) {
    if (!cluster.empty()) chosen.push_back(cluster[bounded_random(random(), cluster.size())]);
  }
  if (chosen.size() < static_cast<std::size_t>(wanted)) {
    console::info(
        "{}: {} of the {} clusters are empty, so {} frames are picked (as DeepLabCut "
        "does)",
        result.stem, static_cast<std::size_t>(wanted) - chosen.size(), wanted, chosen.size());
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

// `among`: when given, only these frames (sorted) are candidates (outlier extraction);
// `check_frame_count` sees the video's frame count before anything is read or written.
void extract_video(const VideoJob& job, const projects::ProjectConfig& config,
                   const ExtractFramesOptions& options, int wanted, Undo& undo,
                   ExtractedVideo& result, const std::vector<std::int64_t>* among = nullptr,
                   const std::function<void(std::int64_t)>& check_frame_count = {}) {
  VideoReader reader(job.path, {PixelOrder::bgr, job.crop, options.threads});
  result.frame_count = reader.frame_count();
  if (check_frame_count) check_frame_count(result.frame_count);
  // DeepLabCut's range: [floor(n * start), ceil(n * stop)).
  const auto n = static_cast<double>(result.frame_count);
  const auto first = static_cast<std::int64_t>(std::floor(n * config.values().start));
  const auto end =
      std::min(result.frame_count, static_cast<std::int64_t>(std::ceil(n * config.values().stop)));
  std::vector<std::int64_t> candidates;
  for (std::int64_t index = first; index < end; ++index) {
    if (among != nullptr && !std::binary_search(among->begin(), among->end(), index)) continue;
    if (job.existing.count(index) != 0) {
      ++result.already_there;
    } else {
      candidates.push_back(index);
    }
  }
  result.candidates = static_cast<std::int64_t>(candidates.size());
  console::info(
      "{}: {} frames{}; picking {} new {} from {}frames {} to {}{}", job.stem, result.frame_count,
      job.crop ? " (cropped)" : "", wanted,
      options.selection == FrameSelection::kmeans ? "by k-means" : "at random",
      among != nullptr ? fmt::format("{} candidate ", static_cast<std::int64_t>(candidates.size()) +
                                                          result.already_there)
                       : "",
      first, end - 1,
      result.already_there > 0
          ? fmt::format(" ({} already in labeled-data/{})", result.already_there, job.stem)
          : "");
  if (static_cast<std::int64_t>(candidates.size()) < wanted) {
    console::warn("{}: only {} frames of the range are left to extract; taking all of them",
                  job.stem, candidates.size());
  }
  std::mt19937_64 random(video_seed(options.seed, job.stem));
  FrameWriter writer(job, reader, undo, result);
  if (options.selection == FrameSelection::uniform) {
    extract_uniform(std::move(candidates), wanted, random, writer, job.stem);
  } else {
    const auto chosen =
        select_kmeans(std::move(candidates), wanted, options, reader, random, result);
    Progress progress("writing " + job.stem, static_cast<std::int64_t>(chosen.size()), "frames");
    for (const std::int64_t index : chosen) {
      writer.write(index);
      progress.advance();
    }
  }
  std::sort(result.frames.begin(), result.frames.end());
  std::sort(result.undecodable.begin(), result.undecodable.end());
  if (!result.undecodable.empty()) {
    console::warn("{}: {} frame{} could not be decoded and {} skipped: {}", job.stem,
                  result.undecodable.size(), result.undecodable.size() == 1 ? "" : "s",
                  result.undecodable.size() == 1 ? "was" : "were",
                  fmt::join(result.undecodable, ", "));
  }
}

int frames_wanted(const projects::ProjectConfig& config, const ExtractFramesOptions& options) {
  const int wanted = options.frames.value_or(config.values().numframes2pick);
  if (wanted < 0) throw UsageError(fmt::format("cannot extract {} frames", wanted));
  return wanted;
}

}  // namespace

std::vector<ExtractedVideo> extract_frames(const projects::ProjectConfig& config,
                                           const ExtractFramesOptions& options) {
  const int wanted = frames_wanted(config, options);
  if (options.cluster_resize_width < 1) {
    throw UsageError(fmt::format("--cluster-resize-width must be at least 1 (found {})",
                                 options.cluster_resize_width));
  }
  const std::vector<VideoJob> jobs = check_videos(config, options);
  Undo undo;
  std::vector<ExtractedVideo> results;
  for (const VideoJob& job : jobs) {
    ExtractedVideo& result = results.emplace_back();
    result.stem = job.stem;
    result.video = job.path;
    result.folder = job.folder;
    if (wanted > 0) extract_video(job, config, options, wanted, undo, result);
  }
  undo.commit();
  return results;
}

ExtractedVideo extract_frames_among(const projects::ProjectConfig& config, const std::string& video,
                                    std::vector<std::int64_t> candidates,
                                    const ExtractFramesOptions& options,
                                    const std::function<void(std::int64_t)>& check_frame_count) {
  const int wanted = frames_wanted(config, options);
  ExtractFramesOptions one = options;
  one.videos = {video};
  const std::vector<VideoJob> jobs = check_videos(config, one);
  LABPOSE_ASSERT(jobs.size() == 1);
  std::sort(candidates.begin(), candidates.end());
  Undo undo;
  ExtractedVideo result;
  result.stem = jobs.front().stem;
  result.video = jobs.front().path;
  result.folder = jobs.front().folder;
  if (wanted > 0 && !candidates.empty())
    extract_video(jobs.front(), config, one, wanted, undo, result, &candidates, check_frame_count);
  undo.commit();
  return result;
}

}  // namespace labpose::pipeline

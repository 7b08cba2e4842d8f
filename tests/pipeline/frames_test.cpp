// Frame extraction: k-means on known clusters; uniform and k-means picks (counts, names, range,
// pixels equal to the decoded frames, seeds); frames already extracted or labeled are never
// overwritten or picked again; crop; bad input leaves nothing behind; the reference video.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <opencv2/core.hpp>
#include <random>
#include <set>

#include "core/error.hpp"
#include "pipeline/frames/extract.hpp"
#include "pipeline/frames/kmeans.hpp"
#include "pipeline/images/image_files.hpp"
#include "pipeline/synthetic/mouse.hpp"
#include "pipeline/video/reader.hpp"
#include "projects/config.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"
#include "projects/project.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

TEST(KMeans, FindsWellSeparatedClustersAndIsDeterministic) {
  constexpr std::size_t kClusters = 6, kPerCluster = 80, kColumns = 24;
  std::mt19937 random(3);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::vector<float> data;
  std::vector<std::size_t> truth;
  for (std::size_t c = 0; c < kClusters; ++c) {
    for (std::size_t i = 0; i < kPerCluster; ++i) {
      for (std::size_t d = 0; d < kColumns; ++d) {
        data.push_back(noise(random) + (d % kClusters == c ? 30.0f : 0.0f));
      }
      truth.push_back(c);
    }
  }
  KMeansOptions options;
  options.clusters = static_cast<int>(kClusters);
  options.batch_size = 100;
  options.seed = 11;
  const std::size_t rows = truth.size();
  const std::vector<int> labels = minibatch_kmeans(data, rows, kColumns, options);
  ASSERT_EQ(labels.size(), rows);
  // Every true cluster maps to one label, and different clusters to different labels.
  std::set<int> used;
  for (std::size_t c = 0; c < kClusters; ++c) {
    const int label = labels[c * kPerCluster];
    for (std::size_t i = 0; i < kPerCluster; ++i) EXPECT_EQ(labels[c * kPerCluster + i], label);
    used.insert(label);
  }
  EXPECT_EQ(used.size(), kClusters);
  EXPECT_EQ(minibatch_kmeans(data, rows, kColumns, options), labels) << "same seed, same labels";
}

// A project around one synthetic video (the mouse, `frames` frames of 160x120).
fs::path make_project(const TempDir& dir, int frames, const std::string& name = "mouse") {
  const fs::path video = dir / (name + ".mp4");
  write_synthetic_video(video, {160, 120, frames, 30.0, 5});
  projects::CreateProjectOptions create;
  create.task = "t";
  create.scorer = "me";
  create.videos = {{video, 160, 120}};
  create.working_dir = dir.path();
  create.copy_videos = true;
  create.date = projects::today();
  return projects::create_project(create);
}

void replace_in_file(const fs::path& file, const std::string& from, const std::string& to) {
  std::string text = testing::read_text(file);
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  testing::write_text(file, text);
}

std::vector<std::string> files_in(const fs::path& folder) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

ExtractFramesOptions picking(FrameSelection selection, int frames, std::uint64_t seed) {
  ExtractFramesOptions options;
  options.selection = selection;
  options.frames = frames;
  options.seed = seed;
  options.threads = 2;
  return options;
}

TEST(ExtractFrames, UniformWritesTheDecodedFramesAsRgbPngsNamedByIndex) {
  const TempDir dir;
  const fs::path config_path = make_project(dir, 120);
  const auto config = projects::ProjectConfig::load(config_path);
  const auto results = extract_frames(config, picking(FrameSelection::uniform, 7, 1));
  ASSERT_EQ(results.size(), 1u);
  const ExtractedVideo& video = results.front();
  EXPECT_EQ(video.frame_count, 120);
  ASSERT_EQ(video.frames.size(), 7u);
  EXPECT_TRUE(std::is_sorted(video.frames.begin(), video.frames.end()));
  const fs::path folder = config_path.parent_path() / "labeled-data" / "mouse";
  EXPECT_EQ(video.folder, folder);
  std::vector<std::string> expected;
  for (const std::int64_t index : video.frames) {
    EXPECT_GE(index, 0);
    EXPECT_LT(index, 120);
    expected.push_back(fmt::format("img{:03}.png", index));  // 3 digits: ceil(log10(120))
  }
  EXPECT_EQ(files_in(folder), expected);
  // Each PNG holds exactly the decoded frame, in RGB order (OpenCV reads PNGs as BGR).
  VideoReader reader(config_path.parent_path() / "videos" / "mouse.mp4",
                     {PixelOrder::bgr, std::nullopt, 1});
  std::vector<std::uint8_t> frame(reader.frame_bytes());
  for (const std::int64_t index : video.frames) {
    reader.seek(index);
    ASSERT_TRUE(reader.read(frame.data()));
    const cv::Mat png =
        read_image((folder / fmt::format("img{:03}.png", index)), ChannelOrder::bgr);
    ASSERT_EQ(png.type(), CV_8UC3);
    ASSERT_EQ(png.cols, 160);
    ASSERT_EQ(png.rows, 120);
    EXPECT_EQ(std::memcmp(png.data, frame.data(), frame.size()), 0) << "frame " << index;
  }
}

TEST(ExtractFrames, KMeansPicksOnePerClusterAndTheSeedDecides) {
  const TempDir first, second;
  const fs::path a = make_project(first, 150), b = make_project(second, 150);
  const auto pick = [](const fs::path& config_path, std::uint64_t seed) {
    return extract_frames(projects::ProjectConfig::load(config_path),
                          picking(FrameSelection::kmeans, 9, seed))
        .front();
  };
  const ExtractedVideo one = pick(a, 42), same = pick(b, 42);
  EXPECT_EQ(one.candidates, 150);
  EXPECT_GE(one.frames.size(), 7u) << "k-means may leave a cluster empty, rarely several";
  EXPECT_LE(one.frames.size(), 9u);
  EXPECT_EQ(one.frames, same.frames) << "the same seed on the same video picks the same frames";
  std::set<std::int64_t> distinct(one.frames.begin(), one.frames.end());
  EXPECT_EQ(distinct.size(), one.frames.size());
  // k-means spreads its picks over the video rather than bunching them.
  EXPECT_GT(one.frames.back() - one.frames.front(), 75);
}

TEST(ExtractFrames, NeverOverwritesOrPicksAgainWhatIsAlreadyThere) {
  const TempDir dir;
  const fs::path config_path = make_project(dir, 40);
  const fs::path folder = config_path.parent_path() / "labeled-data" / "mouse";
  // Already there: an image from earlier (with other content) and two labeled rows whose images
  // were deleted.
  testing::write_text(folder / "img05.png", "an earlier frame");
  projects::Table labels = projects::make_label_table("me", {"bodypart1"});
  labels.add_row({"labeled-data", "mouse", "img10.png"});
  labels.add_row({"labeled-data", "mouse", "img0020.png"});
  projects::write_labels(labels, projects::label_files(folder, "me"));

  const auto config = projects::ProjectConfig::load(config_path);
  const auto first = extract_frames(config, picking(FrameSelection::uniform, 12, 7)).front();
  EXPECT_EQ(first.already_there, 3);
  const auto second = extract_frames(config, picking(FrameSelection::kmeans, 12, 7)).front();
  EXPECT_EQ(second.already_there, 3 + static_cast<std::int64_t>(first.frames.size()));
  std::set<std::int64_t> all(first.frames.begin(), first.frames.end());
  all.insert(second.frames.begin(), second.frames.end());
  EXPECT_EQ(first.frames.size(), 12u);
  EXPECT_EQ(all.size(), first.frames.size() + second.frames.size()) << "no frame twice";
  for (const std::int64_t taken : {5, 10, 20}) EXPECT_EQ(all.count(taken), 0u) << taken;
  EXPECT_EQ(testing::read_text(folder / "img05.png"), "an earlier frame");

  // Asking for more than is left takes what is left (40 - 3 - 24 or so), then nothing.
  const auto rest = extract_frames(config, picking(FrameSelection::uniform, 100, 1)).front();
  EXPECT_EQ(static_cast<std::int64_t>(rest.frames.size()) + rest.already_there, 40);
  const auto none = extract_frames(config, picking(FrameSelection::kmeans, 5, 1)).front();
  EXPECT_TRUE(none.frames.empty());
  EXPECT_EQ(files_in(folder).size(), 40u - 2u + 2u) << "37 extracted + img05 + 2 label files";
}

TEST(ExtractFrames, StartStopRangeAndCrop) {
  const TempDir dir;
  const fs::path config_path = make_project(dir, 100);
  replace_in_file(config_path, "start: 0\n", "start: 0.5\n");
  replace_in_file(config_path, "stop: 1\n", "stop: 0.75\n");
  replace_in_file(config_path, "crop: 0, 160, 0, 120", "crop: 21, 121, 10, 90");
  const auto config = projects::ProjectConfig::load(config_path);
  ExtractFramesOptions options = picking(FrameSelection::uniform, 30, 3);
  options.crop = true;
  const auto result = extract_frames(config, options).front();
  EXPECT_EQ(result.frames.size(), 25u) << "the range [50, 75) holds 25 frames";
  EXPECT_EQ(result.frames.front(), 50);
  EXPECT_EQ(result.frames.back(), 74);
  VideoReader reader(config_path.parent_path() / "videos" / "mouse.mp4",
                     {PixelOrder::bgr, PixelRect{21, 10, 100, 80}, 1});
  std::vector<std::uint8_t> frame(reader.frame_bytes());
  reader.seek(60);
  ASSERT_TRUE(reader.read(frame.data()));
  const cv::Mat png =
      read_image((result.folder / "img60.png"), ChannelOrder::bgr);  // 2 digits: 100 frames
  ASSERT_EQ(png.cols, 100);
  ASSERT_EQ(png.rows, 80);
  EXPECT_EQ(std::memcmp(png.data, frame.data(), frame.size()), 0);
}

std::string extract_error(const fs::path& config_path, const ExtractFramesOptions& options) {
  try {
    extract_frames(projects::ProjectConfig::load(config_path), options);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(ExtractFrames, BadInputIsNamedAndLeavesNothingBehind) {
  const TempDir dir;
  const fs::path config_path = make_project(dir, 30, "good");
  const fs::path project = config_path.parent_path();
  // A second video: added as a copy of the first, then damaged in different ways.
  auto config = projects::ProjectConfig::load(config_path);
  fs::copy_file(project / "videos" / "good.mp4", dir / "bad.mp4");
  projects::add_videos(config, {{dir / "bad.mp4", 160, 120}}, true);
  const fs::path bad = project / "videos" / "bad.mp4";
  const auto nothing_written = [&] {
    EXPECT_TRUE(fs::is_empty(project / "labeled-data" / "good"));
  };

  for (const std::string damage : {"empty", "not a video", "missing"}) {
    SCOPED_TRACE(damage);
    fs::remove(bad);
    if (damage == "empty") testing::write_text(bad, "");
    if (damage == "not a video") testing::write_text(bad, "my notes");
    const std::string message = extract_error(config_path, picking(FrameSelection::kmeans, 4, 1));
    EXPECT_NE(message.find("bad.mp4"), std::string::npos) << message;
    nothing_written();
  }

  // A failure in the middle: the good video's frames are written, then the bad video's folder
  // cannot be made (a file is in its place); the good video's frames are removed again.
  fs::copy_file(project / "videos" / "good.mp4", bad);
  fs::remove(project / "labeled-data" / "bad");
  testing::write_text(project / "labeled-data" / "bad", "a file, not a folder");
  const std::string message = extract_error(config_path, picking(FrameSelection::uniform, 4, 1));
  EXPECT_NE(message.find("labeled-data/bad"), std::string::npos) << message;
  nothing_written();
  fs::remove(project / "labeled-data" / "good");  // not even an empty folder stays when made now
  extract_error(config_path, picking(FrameSelection::uniform, 4, 1));
  EXPECT_FALSE(fs::exists(project / "labeled-data" / "good"));

  // Usage errors: a video not in the project, a resize width larger than the frames.
  ExtractFramesOptions unknown = picking(FrameSelection::kmeans, 4, 1);
  unknown.videos = {"nosuchvideo"};
  EXPECT_EQ(
      extract_error(config_path, unknown).rfind("nosuchvideo is not a video of this project", 0),
      0u);
  ExtractFramesOptions wide = picking(FrameSelection::kmeans, 4, 1);
  wide.videos = {"good"};
  wide.cluster_resize_width = 500;
  EXPECT_NE(extract_error(config_path, wide).find("--cluster-resize-width 500 is wider"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(project / "labeled-data" / "good"));
}

TEST(ExtractFrames, ReferenceVideo) {
  LABPOSE_REQUIRE_OPENFIELD(reference);
  const TempDir dir;
  projects::CreateProjectOptions create;
  create.task = "openfield";
  create.scorer = "me";
  create.videos = {{reference / "videos" / "m3v1mp4.mp4", 640, 480}};
  create.working_dir = dir.path();
  create.date = projects::today();
  const fs::path config_path = projects::create_project(create);
  replace_in_file(config_path, "stop: 1\n", "stop: 0.1\n");
  const auto result = extract_frames(projects::ProjectConfig::load(config_path),
                                     picking(FrameSelection::kmeans, 5, 2))
                          .front();
  EXPECT_EQ(result.frame_count, 2330);
  EXPECT_EQ(result.candidates, 233) << "[0, ceil(2330 * 0.1))";
  ASSERT_GE(result.frames.size(), 4u);
  for (const std::int64_t index : result.frames) {
    EXPECT_LT(index, 233);
    EXPECT_TRUE(fs::is_regular_file(result.folder / fmt::format("img{:04}.png", index))) << index;
  }
}

}  // namespace
}  // namespace labpose::pipeline

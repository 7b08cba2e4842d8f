// Video probing and writing: sizes, rates and frame counts of generated clips in several
// containers; clear errors for files that are not videos.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>

#include "core/error.hpp"
#include "pipeline/video/probe.hpp"
#include "pipeline/video/writer.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

void write_clip(const fs::path& path, int width, int height, int frames, double fps,
                const std::string& codec) {
  VideoWriter writer(path, {width, height, fps, codec, 18});
  std::vector<std::uint8_t> frame(static_cast<std::size_t>(width) *
                                  static_cast<std::size_t>(height) * 3);
  for (int i = 0; i < frames; ++i) {
    for (std::size_t p = 0; p < frame.size(); ++p)
      frame[p] = static_cast<std::uint8_t>((p + static_cast<std::size_t>(i) * 7) % 251);
    writer.write_bgr(frame.data(), static_cast<std::size_t>(width) * 3);
  }
  EXPECT_FALSE(fs::exists(path)) << "the video appears only when it is complete";
  writer.close();
  EXPECT_EQ(writer.frames_written(), frames);
}

TEST(VideoWriter, WritesClipsThatProbeCorrectlyInSeveralContainers) {
  const TempDir dir;
  struct Case {
    const char* name;
    const char* codec;
    const char* expected_codec;
  };
  for (const Case& c : {Case{"clip.mp4", "auto", "h264"}, Case{"clip.avi", "mpeg4", "mpeg4"},
                        Case{"clip.mkv", "libx264", "h264"}}) {
    write_clip(dir / c.name, 96, 64, 25, 25.0, c.codec);
    const VideoInfo info = probe_video(dir / c.name);
    EXPECT_EQ(info.width, 96) << c.name;
    EXPECT_EQ(info.height, 64) << c.name;
    EXPECT_NEAR(info.fps, 25.0, 1e-6) << c.name;
    EXPECT_EQ(info.codec, c.expected_codec) << c.name;
    EXPECT_NEAR(static_cast<double>(info.frame_count), 25.0,
                info.frame_count_source == FrameCountSource::header ? 0.0 : 1.0)
        << c.name;
  }
}

TEST(VideoWriter, OddSizesArePaddedToEven) {
  const TempDir dir;
  write_clip(dir / "odd.mp4", 95, 63, 5, 30.0, "auto");
  const VideoInfo info = probe_video(dir / "odd.mp4");
  EXPECT_EQ(info.width, 96);
  EXPECT_EQ(info.height, 64);
}

TEST(VideoWriter, NonIntegerFrameRates) {
  const TempDir dir;
  write_clip(dir / "ntsc.mp4", 64, 48, 10, 29.97, "auto");
  EXPECT_NEAR(probe_video(dir / "ntsc.mp4").fps, 29.97, 1e-3);
}

TEST(VideoWriter, AnAbandonedWriterLeavesNoFile) {
  const TempDir dir;
  {
    VideoWriter writer(dir / "partial.mp4", {64, 48, 30.0, "auto", 18});
    std::vector<std::uint8_t> frame(std::size_t{64} * 48 * 3, 128);
    writer.write_bgr(frame.data(), std::size_t{64} * 3);
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(VideoWriter, BadSettingsAreClearErrors) {
  const TempDir dir;
  EXPECT_THROW(VideoWriter(dir / "x.mp4", {0, 48, 30.0, "auto", 18}), Error);
  EXPECT_THROW(VideoWriter(dir / "x.unknownext", {64, 48, 30.0, "auto", 18}), Error);
  EXPECT_THROW(VideoWriter(dir / "missing" / "x.mp4", {64, 48, 30.0, "auto", 18}), Error);
}

std::string probe_error(const fs::path& path) {
  try {
    probe_video(path);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(ProbeVideo, ClearErrorsForThingsThatAreNotVideos) {
  const TempDir dir;
  testing::write_text(dir / "empty.mp4", "");
  testing::write_text(dir / "notes.mp4", "these are my notes, not a video\n");
  fs::create_directory(dir / "folder.mp4");
  EXPECT_NE(probe_error(dir / "none.mp4").find("none.mp4 does not exist"), std::string::npos);
  EXPECT_NE(probe_error(dir / "empty.mp4").find("is empty (0 bytes)"), std::string::npos);
  EXPECT_NE(probe_error(dir / "notes.mp4")
                .find("cannot open " + (dir / "notes.mp4").string() + " as a video"),
            std::string::npos)
      << probe_error(dir / "notes.mp4");
  EXPECT_NE(probe_error(dir / "folder.mp4").find("is a folder"), std::string::npos);
}

TEST(ProbeVideo, TruncatedVideoIsRefusedOrReadWithoutCrashing) {
  const TempDir dir;
  write_clip(dir / "full.mp4", 64, 48, 30, 30.0, "auto");
  const std::string bytes = testing::read_text(dir / "full.mp4");
  testing::write_text(dir / "cut.mp4", bytes.substr(0, bytes.size() / 3));
  // An mp4 cut short loses its index (moov atom at the end): it must be a clear error.
  EXPECT_NE(probe_error(dir / "cut.mp4").find("cut.mp4"), std::string::npos);
}

TEST(ProbeVideo, UnreadableFileIsAClearError) {
  const TempDir dir;
  write_clip(dir / "private.mp4", 64, 48, 3, 30.0, "auto");
  fs::permissions(dir / "private.mp4", fs::perms::owner_write);
  fs::permissions(dir.path(), fs::perms::all);
  const fs::path path = dir / "private.mp4";
  EXPECT_EXIT(
      {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(10);
        _exit(probe_error(path).find("cannot read video " + path.string() +
                                     ": permission denied") == 0
                  ? 0
                  : 11);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ProbeVideo, ReferenceVideo) {
  LABPOSE_REQUIRE_OPENFIELD(project);
  const VideoInfo info = probe_video(project / "videos" / "m3v1mp4.mp4");
  EXPECT_EQ(info.width, 640);
  EXPECT_EQ(info.height, 480);
  EXPECT_EQ(info.frame_count, 2330);
  EXPECT_EQ(info.frame_count_source, FrameCountSource::header);
}

}  // namespace
}  // namespace labpose::pipeline

// VideoReader: exact frame counts, frame numbers read back from the pictures themselves (each
// generated frame shows its index in binary), seek-vs-sequential identity across codecs and
// containers, variable frame rate, crop and channel order, undecodable frames, and bad files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <random>
#include <string_view>

#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/video/reader.hpp"
#include "pipeline/video/writer.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

constexpr int kWidth = 160, kHeight = 96;
constexpr int kBits = 10, kBlock = 12;  // the frame index as 10 blocks of 12x12 pixels, top left

// A frame showing `index`: textured background, the index in binary, a pure red patch bottom
// left and a pure blue patch bottom right (BGR in memory, as VideoWriter takes it).
std::vector<std::uint8_t> numbered_frame(int index) {
  std::vector<std::uint8_t> bgr(static_cast<std::size_t>(kWidth * kHeight * 3));
  for (int y = 0; y < kHeight; ++y) {
    for (int x = 0; x < kWidth; ++x) {
      std::uint8_t* pixel =
          &bgr[(static_cast<std::size_t>(y) * kWidth + static_cast<std::size_t>(x)) * 3];
      std::uint8_t b = static_cast<std::uint8_t>(90 + (x * 3 + y + index) % 40);
      std::uint8_t g = static_cast<std::uint8_t>(100 + (x + 2 * y) % 30);
      std::uint8_t r = 110;
      if (y < kBlock && x < kBits * kBlock) {
        const bool bit = ((index >> (x / kBlock)) & 1) != 0;
        b = g = r = bit ? 250 : 5;
      } else if (y >= kHeight - 24 && x < 32) {
        b = 0, g = 0, r = 255;
      } else if (y >= kHeight - 24 && x >= kWidth - 32) {
        b = 255, g = 0, r = 0;
      }
      pixel[0] = b, pixel[1] = g, pixel[2] = r;
    }
  }
  return bgr;
}

// The index shown by a decoded RGB frame (full width, uncropped).
int shown_index(const std::uint8_t* rgb) {
  int index = 0;
  for (int bit = 0; bit < kBits; ++bit) {
    const int x = bit * kBlock + kBlock / 2, y = kBlock / 2;
    if (rgb[static_cast<std::size_t>((y * kWidth + x) * 3 + 1)] > 128) index |= 1 << bit;
  }
  return index;
}

// Writes `ticks.size()` numbered frames, frame i at ticks[i] frame periods.
void write_numbered_clip(const fs::path& path, const std::string& codec,
                         const std::vector<std::int64_t>& ticks, double fps = 25.0) {
  VideoWriter writer(path, {kWidth, kHeight, fps, codec, 12});
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    const auto frame = numbered_frame(static_cast<int>(i));
    writer.write_bgr_at(frame.data(), std::size_t{kWidth} * 3, ticks[i]);
  }
  writer.close();
}

std::vector<std::int64_t> regular_ticks(int frames) {
  std::vector<std::int64_t> ticks(static_cast<std::size_t>(frames));
  for (int i = 0; i < frames; ++i) ticks[static_cast<std::size_t>(i)] = i;
  return ticks;
}

struct Clip {
  const char* name;
  const char* codec;
  const char* expected_codec;
};
const Clip kClips[] = {{"h264.mp4", "libx264", "h264"},
                       {"mpeg4.avi", "mpeg4", "mpeg4"},
                       {"mjpeg.avi", "mjpeg", "mjpeg"},
                       {"h264.mkv", "libx264", "h264"}};

std::vector<std::vector<std::uint8_t>> read_all(VideoReader& reader) {
  std::vector<std::vector<std::uint8_t>> frames;
  std::vector<std::uint8_t> buffer(reader.frame_bytes());
  while (const auto read = reader.read(buffer.data())) {
    EXPECT_EQ(read->index, static_cast<std::int64_t>(frames.size()));
    EXPECT_EQ(read->status, FrameStatus::ok) << "frame " << read->index;
    frames.push_back(buffer);
  }
  return frames;
}

TEST(VideoReader, ExactCountsAndFrameNumbersInEveryCodecAndContainer) {
  const TempDir dir;
  constexpr int kFrames = 70;
  for (const Clip& clip : kClips) {
    SCOPED_TRACE(clip.name);
    write_numbered_clip(dir / clip.name, clip.codec, regular_ticks(kFrames));
    VideoReader reader(dir / clip.name, {PixelOrder::rgb, std::nullopt, 2});
    const VideoInfo& info = reader.info();
    EXPECT_EQ(reader.frame_count(), kFrames);
    EXPECT_EQ(info.frame_count_source, FrameCountSource::packets);
    EXPECT_EQ(info.codec, clip.expected_codec);
    EXPECT_EQ(info.width, kWidth);
    EXPECT_EQ(info.height, kHeight);
    EXPECT_NEAR(info.fps, 25.0, 1e-6);
    EXPECT_NEAR(info.duration_seconds, kFrames / 25.0, 1e-3);
    EXPECT_FALSE(info.variable_frame_rate);
    EXPECT_TRUE(reader.exact_frame_numbers());
    const auto frames = read_all(reader);
    ASSERT_EQ(frames.size(), static_cast<std::size_t>(kFrames));
    for (int i = 0; i < kFrames; ++i) {
      EXPECT_EQ(shown_index(frames[static_cast<std::size_t>(i)].data()), i);
    }
    EXPECT_NEAR(reader.frame_seconds(kFrames - 1), (kFrames - 1) / 25.0, 1e-3);
    EXPECT_TRUE(reader.undecodable_frames().empty());
    EXPECT_FALSE(reader.read(std::vector<std::uint8_t>(reader.frame_bytes()).data()))
        << "nothing after the last frame";
  }
}

TEST(VideoReader, FrameAfterASeekIsBitIdenticalToTheSequentialOne) {
  const TempDir dir;
  constexpr int kFrames = 90;  // several key frames (the writer puts one every 12 frames)
  std::mt19937 random(7);
  for (const Clip& clip : kClips) {
    SCOPED_TRACE(clip.name);
    write_numbered_clip(dir / clip.name, clip.codec, regular_ticks(kFrames));
    VideoReader sequential(dir / clip.name, {PixelOrder::rgb, std::nullopt, 3});
    const auto frames = read_all(sequential);
    ASSERT_EQ(frames.size(), static_cast<std::size_t>(kFrames));
    // One decoder thread decodes on the caller's thread, more decode ahead on another: the same.
    VideoReader single(dir / clip.name, {PixelOrder::rgb, std::nullopt, 1});
    EXPECT_TRUE(read_all(single) == frames);

    std::vector<std::int64_t> targets = {kFrames - 1, 0, 12, 11, 13, 13, 50, 49, 1, kFrames - 2};
    for (int i = 0; i < 25; ++i) targets.push_back(static_cast<std::int64_t>(random() % kFrames));
    for (const int threads : {3, 1}) {
      SCOPED_TRACE(::testing::Message() << threads << " decoder threads");
      VideoReader reader(dir / clip.name, {PixelOrder::rgb, std::nullopt, threads});
      std::vector<std::uint8_t> buffer(reader.frame_bytes());
      for (const std::int64_t target : targets) {
        reader.seek(target);
        ASSERT_EQ(reader.position(), target);
        const auto read = reader.read(buffer.data());
        ASSERT_TRUE(read);
        EXPECT_EQ(read->index, target);
        EXPECT_EQ(read->status, FrameStatus::ok);
        EXPECT_TRUE(buffer == frames[static_cast<std::size_t>(target)]) << "frame " << target;
        // and the frame after it, read on without seeking
        if (target + 1 < kFrames) {
          ASSERT_TRUE(reader.read(buffer.data()));
          EXPECT_TRUE(buffer == frames[static_cast<std::size_t>(target + 1)])
              << "frame " << target + 1;
        }
      }
    }
  }
}

// --decode gpu: NVDEC's pictures (NV12, brought back to the host) give the CPU's bytes, sequential
// and after seeks; where NVDEC cannot be used (no GPU here, or a codec it lacks), the CPU decodes
// the same frames and the reader says why, once per video.
TEST(VideoReader, GpuDecodingGivesTheCpusFramesOrFallsBackSayingWhy) {
  const TempDir dir;
  constexpr int kFrames = 40;
  std::mutex mutex;
  std::string printed;
  console::set_writer(
      [&](std::string_view text) {
        const std::lock_guard lock(mutex);
        printed += text;
      },
      false);
  for (const Clip& clip : kClips) {
    SCOPED_TRACE(clip.name);
    write_numbered_clip(dir / clip.name, clip.codec, regular_ticks(kFrames));
    VideoReader cpu(dir / clip.name, {PixelOrder::rgb, std::nullopt, 2});
    const auto frames = read_all(cpu);
    for (const int threads : {2, 1}) {
      printed.clear();
      VideoReaderOptions options{PixelOrder::rgb, std::nullopt, threads};
      options.gpu_decoding = 0;
      VideoReader gpu(dir / clip.name, options);
      EXPECT_TRUE(read_all(gpu) == frames);
      gpu.seek(13);
      std::vector<std::uint8_t> buffer(gpu.frame_bytes());
      ASSERT_TRUE(gpu.read(buffer.data()));
      EXPECT_TRUE(buffer == frames[13]) << "after a seek";
      const std::lock_guard lock(mutex);
      if (gpu.decodes_on_gpu()) {
        EXPECT_NE(printed.find("decoding on CUDA device 0 (NVDEC)"), std::string::npos) << printed;
      } else {
        EXPECT_NE(printed.find("warning: video " + (dir / clip.name).string()), std::string::npos)
            << printed;
        EXPECT_TRUE(printed.find("decoding on the CPU") != std::string::npos ||
                    printed.find("decodes it on the CPU") != std::string::npos)
            << printed;
        EXPECT_EQ(printed.find("warning", printed.find("warning") + 1), std::string::npos)
            << "said once: " << printed;
      }
    }
  }
  console::set_writer({}, false);
}

TEST(VideoReader, VariableFrameRateIsDetectedAndNumbersStayExact) {
  const TempDir dir;
  // A camera that dropped frames: gaps of one and three frame periods.
  const std::vector<std::int64_t> ticks = {0,  1,  2,  3,  5,  6,  7,  8,  9,  10, 14, 15,
                                           16, 17, 18, 19, 20, 22, 23, 24, 25, 26, 27, 28};
  for (const Clip& clip : {kClips[0], kClips[3]}) {
    SCOPED_TRACE(clip.name);
    write_numbered_clip(dir / clip.name, clip.codec, ticks);
    VideoReader reader(dir / clip.name);
    EXPECT_TRUE(reader.info().variable_frame_rate);
    EXPECT_EQ(reader.frame_count(), static_cast<std::int64_t>(ticks.size()));
    for (std::size_t i = 0; i < ticks.size(); ++i) {
      EXPECT_NEAR(reader.frame_seconds(static_cast<std::int64_t>(i)),
                  static_cast<double>(ticks[i]) / 25.0, 1e-3)
          << i;
    }
    const auto frames = read_all(reader);
    ASSERT_EQ(frames.size(), ticks.size());
    for (std::size_t i = 0; i < frames.size(); ++i) {
      EXPECT_EQ(shown_index(frames[i].data()), static_cast<int>(i));
    }
    reader.seek(17);
    std::vector<std::uint8_t> buffer(reader.frame_bytes());
    ASSERT_TRUE(reader.read(buffer.data()));
    EXPECT_EQ(shown_index(buffer.data()), 17);
  }
}

TEST(VideoReader, CropAndChannelOrder) {
  const TempDir dir;
  for (const Clip& clip : {kClips[0], kClips[2]}) {
    SCOPED_TRACE(clip.name);
    write_numbered_clip(dir / clip.name, clip.codec, regular_ticks(5));
    VideoReader rgb(dir / clip.name, {PixelOrder::rgb, std::nullopt, 1});
    VideoReader bgr(dir / clip.name, {PixelOrder::bgr, std::nullopt, 1});
    std::vector<std::uint8_t> a(rgb.frame_bytes()), b(bgr.frame_bytes());
    rgb.seek(3);
    bgr.seek(3);
    ASSERT_TRUE(rgb.read(a.data()));
    ASSERT_TRUE(bgr.read(b.data()));
    for (std::size_t p = 0; p < a.size(); p += 3) {
      ASSERT_EQ(a[p], b[p + 2]);
      ASSERT_EQ(a[p + 1], b[p + 1]);
      ASSERT_EQ(a[p + 2], b[p]);
    }
    // The red patch (bottom left) is red in RGB order, the blue one (bottom right) blue.
    const auto pixel = [&](int x, int y) {
      return &a[(static_cast<std::size_t>(y) * kWidth + static_cast<std::size_t>(x)) * 3];
    };
    const std::uint8_t* red = pixel(12, kHeight - 10);
    EXPECT_GT(red[0], 220);
    EXPECT_LT(red[1], 40);
    EXPECT_LT(red[2], 40);
    const std::uint8_t* blue = pixel(kWidth - 12, kHeight - 10);
    EXPECT_LT(blue[0], 40);
    EXPECT_LT(blue[1], 40);
    EXPECT_GT(blue[2], 220);

    // A crop (odd offsets, inside 4:2:0 chroma pairs) is exactly that part of the whole frame.
    const PixelRect box{27, 13, 101, 61};
    VideoReader cropped(dir / clip.name, {PixelOrder::rgb, box, 2});
    EXPECT_EQ(cropped.width(), box.width);
    EXPECT_EQ(cropped.height(), box.height);
    std::vector<std::uint8_t> part(cropped.frame_bytes());
    cropped.seek(3);
    ASSERT_TRUE(cropped.read(part.data()));
    for (int y = 0; y < box.height; ++y) {
      ASSERT_EQ(std::memcmp(&part[static_cast<std::size_t>(y * box.width * 3)],
                            pixel(box.x, box.y + y), static_cast<std::size_t>(box.width * 3)),
                0)
          << "row " << y;
    }
    EXPECT_THROW(VideoReader(dir / clip.name, {PixelOrder::rgb, PixelRect{100, 0, 61, 10}, 1}),
                 Error);
  }
}

TEST(VideoReader, UndecodableFramesAreReportedAtTheirIndexNeverShifted) {
  const TempDir dir;
  const fs::path path = dir / "damaged.avi";
  write_numbered_clip(path, "mjpeg", regular_ticks(30));
  testing::corrupt_avi_frames(path, {5, 11, 12, 29});
  VideoReader reader(path, {PixelOrder::rgb, std::nullopt, 2});
  ASSERT_EQ(reader.frame_count(), 30);
  std::vector<std::uint8_t> buffer(reader.frame_bytes(), 77);
  std::vector<std::int64_t> missing;
  std::int64_t expected = 0;
  while (const auto read = reader.read(buffer.data())) {
    EXPECT_EQ(read->index, expected++);
    if (read->status == FrameStatus::undecodable) {
      missing.push_back(read->index);
    } else {
      EXPECT_EQ(shown_index(buffer.data()), read->index);
    }
  }
  EXPECT_EQ(expected, 30);
  EXPECT_EQ(missing, (std::vector<std::int64_t>{5, 11, 12, 29}));
  EXPECT_EQ(reader.undecodable_frames(), missing);

  // The same after seeks, and the caller's buffer is left alone for a missing frame.
  std::fill(buffer.begin(), buffer.end(), 77);
  reader.seek(11);
  auto read = reader.read(buffer.data());
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, FrameStatus::undecodable);
  EXPECT_TRUE(std::all_of(buffer.begin(), buffer.end(), [](std::uint8_t v) { return v == 77; }));
  reader.seek(13);
  read = reader.read(buffer.data());
  ASSERT_TRUE(read);
  EXPECT_EQ(read->index, 13);
  EXPECT_EQ(shown_index(buffer.data()), 13);
}

TEST(VideoReader, FramesTheDecoderPatchedUpAreFlaggedDamaged) {
  const TempDir dir;
  const fs::path path = dir / "damaged.avi";
  write_numbered_clip(path, "mpeg4", regular_ticks(20));
  testing::corrupt_avi_frames(path, {7}, 0.35);
  VideoReader reader(path);
  std::vector<std::uint8_t> buffer(reader.frame_bytes());
  while (const auto read = reader.read(buffer.data())) {
    EXPECT_EQ(read->status, read->index == 7 ? FrameStatus::damaged : FrameStatus::ok)
        << read->index;
    if (read->index != 7) {
      EXPECT_EQ(shown_index(buffer.data()), read->index);
    }
  }
  EXPECT_EQ(reader.damaged_frames(), std::vector<std::int64_t>{7});
  EXPECT_TRUE(reader.undecodable_frames().empty());
}

TEST(VideoReader, VideosWithoutTimestampsAreNumberedInDecodingOrder) {
  // H.264 with B-frames in AVI: the packets carry no presentation times.
  const TempDir dir;
  const fs::path path = dir / "h264.avi";
  write_numbered_clip(path, "libx264", regular_ticks(40));
  VideoReader reader(path, {PixelOrder::rgb, std::nullopt, 2});
  EXPECT_FALSE(reader.exact_frame_numbers());
  EXPECT_EQ(reader.frame_count(), 40);
  const auto frames = read_all(reader);
  ASSERT_EQ(frames.size(), 40u);
  for (int i = 0; i < 40; ++i)
    EXPECT_EQ(shown_index(frames[static_cast<std::size_t>(i)].data()), i);
  std::vector<std::uint8_t> buffer(reader.frame_bytes());
  for (const std::int64_t target : {31, 5, 6, 39, 0}) {
    reader.seek(target);
    ASSERT_TRUE(reader.read(buffer.data()));
    EXPECT_TRUE(buffer == frames[static_cast<std::size_t>(target)]) << target;
  }
}

TEST(VideoReader, TruncatedFilesAreReadAsFarAsTheyGoOrRefusedClearly) {
  const TempDir dir;
  for (const Clip& clip : {kClips[1], kClips[2], kClips[3]}) {
    SCOPED_TRACE(clip.name);
    const fs::path full = dir / clip.name, cut = dir / (std::string("cut-") + clip.name);
    write_numbered_clip(full, clip.codec, regular_ticks(40));
    const std::string bytes = testing::read_text(full);
    testing::write_text(cut, bytes.substr(0, bytes.size() * 6 / 10));
    VideoReader reader(cut);
    EXPECT_GT(reader.frame_count(), 5);
    EXPECT_LT(reader.frame_count(), 40);
    std::vector<std::uint8_t> buffer(reader.frame_bytes());
    std::int64_t expected = 0;
    while (const auto read = reader.read(buffer.data())) {
      EXPECT_EQ(read->index, expected++);
      if (read->status == FrameStatus::ok) {
        EXPECT_EQ(shown_index(buffer.data()), read->index);
      }
    }
    EXPECT_EQ(expected, reader.frame_count());
  }
  // An mp4 cut short loses its index (written last): a clear error naming the file.
  write_numbered_clip(dir / "full.mp4", "libx264", regular_ticks(40));
  const std::string bytes = testing::read_text(dir / "full.mp4");
  testing::write_text(dir / "cut.mp4", bytes.substr(0, bytes.size() / 2));
  try {
    VideoReader reader(dir / "cut.mp4");
    ADD_FAILURE() << "a truncated mp4 opened";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find((dir / "cut.mp4").string()), std::string::npos)
        << error.what();
  }
}

std::string open_error(const fs::path& path) {
  try {
    VideoReader reader(path);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(VideoReader, BadFilesAreClearErrorsNamingTheVideo) {
  const TempDir dir;
  testing::write_text(dir / "empty.mp4", "");
  testing::write_text(dir / "notes.avi", "these are my notes, not a video\n");
  EXPECT_EQ(open_error(dir / "empty.mp4"),
            "video " + (dir / "empty.mp4").string() + " is empty (0 bytes)");
  EXPECT_EQ(open_error(dir / "none.mp4"),
            "video " + (dir / "none.mp4").string() + " does not exist");
  EXPECT_EQ(open_error(dir / "notes.avi")
                .rfind("cannot open " + (dir / "notes.avi").string() + " as a video", 0),
            0u)
      << open_error(dir / "notes.avi");
  EXPECT_EQ(open_error(dir.path()), dir.path().string() + " is a folder, not a video");

  write_numbered_clip(dir / "private.mp4", "libx264", regular_ticks(3));
  fs::permissions(dir / "private.mp4", fs::perms::owner_write);
  fs::permissions(dir.path(), fs::perms::all);
  const fs::path path = dir / "private.mp4";
  EXPECT_EXIT(
      {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(10);
        _exit(open_error(path) == "cannot read video " + path.string() + ": permission denied"
                  ? 0
                  : 11);
      },
      ::testing::ExitedWithCode(0), "");
}

// The hint of the Error opening `path` gives.
std::string open_hint(const fs::path& path) {
  try {
    VideoReader reader(path);
  } catch (const Error& error) {
    return error.hint();
  }
  return "";
}

// A YUV4MPEG video (the header is a line of text, the frames raw 4:2:0 pictures of 64x48) whose
// header claims `width` x `height`.
fs::path write_y4m_claiming(const fs::path& path, int width, int height) {
  std::string bytes = "YUV4MPEG2 W" + std::to_string(width) + " H" + std::to_string(height) +
                      " F25:1 Ip A1:1 C420jpeg\n";
  for (int frame = 0; frame < 2; ++frame) bytes += "FRAME\n" + std::string(64 * 48 * 3 / 2, 'x');
  testing::write_text(path, bytes);
  return path;
}

// An MJPEG AVI of ours with the frame size in its headers (avih, strf) and in every picture (the
// JPEG SOF0 marker) replaced by `width` x `height`.
fs::path write_mjpeg_claiming(const fs::path& path, int width, int height) {
  write_numbered_clip(path, "mjpeg", regular_ticks(3));
  std::string bytes = testing::read_text(path);
  const auto put = [&](std::size_t at, std::uint32_t value, int size, bool big_endian) {
    for (int i = 0; i < size; ++i) {
      const int shift = 8 * (big_endian ? size - 1 - i : i);
      bytes[at + static_cast<std::size_t>(i)] = static_cast<char>((value >> shift) & 0xFF);
    }
  };
  const std::size_t avih = bytes.find("avih"), strf = bytes.find("strf");
  EXPECT_NE(avih, std::string::npos);
  EXPECT_NE(strf, std::string::npos);
  put(avih + 8 + 32, static_cast<std::uint32_t>(width), 4, false);  // dwWidth, dwHeight
  put(avih + 8 + 36, static_cast<std::uint32_t>(height), 4, false);
  put(strf + 8 + 4, static_cast<std::uint32_t>(width), 4, false);  // biWidth, biHeight
  put(strf + 8 + 8, static_cast<std::uint32_t>(height), 4, false);
  int pictures = 0;
  for (std::size_t at = bytes.find("\xFF\xC0"); at != std::string::npos;
       at = bytes.find("\xFF\xC0", at + 2), ++pictures) {
    put(at + 5, static_cast<std::uint32_t>(height), 2, true);  // SOF0: length, precision, Y, X
    put(at + 7, static_cast<std::uint32_t>(width), 2, true);
  }
  EXPECT_EQ(pictures, 3);
  testing::write_text(path, bytes);
  return path;
}

// Issue 16, defect 9b: a video whose header claims a huge frame size gave "cannot open ... as a
// video: Device or resource busy" (FFmpeg refusing the size), or frames of hundreds of megabytes
// were allocated and decoded. Both are refused with the size the file claims.
TEST(VideoReader, HugeClaimedFrameSizesAreRefusedNamingTheSize) {
  const TempDir dir;
  for (const fs::path& video : {write_y4m_claiming(dir / "refused.y4m", 100000, 100000),
                                write_mjpeg_claiming(dir / "refused.avi", 30000, 30000)}) {
    const std::string message = open_error(video);
    const std::string size = video.extension() == ".y4m" ? "100000x100000" : "30000x30000";
    EXPECT_NE(message.find("video " + video.string() + " claims frames of " + size + " pixels"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("damaged or not a video"), std::string::npos) << message;
    EXPECT_EQ(message.find("busy"), std::string::npos) << message;
    EXPECT_NE(open_hint(video).find("check that it plays"), std::string::npos) << open_hint(video);
  }
  // Sizes FFmpeg would allocate, but beyond labpose's bound on a frame.
  for (const fs::path& video : {write_y4m_claiming(dir / "large.y4m", 16000, 16000),
                                write_mjpeg_claiming(dir / "large.avi", 12000, 12000)}) {
    const std::string message = open_error(video);
    const std::string size = video.extension() == ".y4m" ? "16000x16000" : "12000x12000";
    EXPECT_NE(message.find("video " + video.string() + " claims frames of " + size + " pixels"),
              std::string::npos)
        << message;
    EXPECT_NE(
        message.find("more than the 8192x8192 pixels labpose reads (at most 16384 on a side)"),
        std::string::npos)
        << message;
  }
  // The same files with their true size still read.
  VideoReader small(write_y4m_claiming(dir / "small.y4m", 64, 48));
  EXPECT_EQ(small.frame_count(), 2);
  VideoReader clip(write_mjpeg_claiming(dir / "clip.avi", kWidth, kHeight));
  EXPECT_EQ(read_all(clip).size(), 3u);
}

// A fingerprint per frame, so that a long video's frames need not all stay in memory.
std::size_t fingerprint(const std::vector<std::uint8_t>& bytes) {
  return std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

TEST(VideoReader, ReferenceVideoCountsAndSeeksExactly) {
  LABPOSE_REQUIRE_OPENFIELD(project);
  const fs::path video = project / "videos" / "m3v1mp4.mp4";
  // A crop (the middle of the arena) keeps conversion and fingerprints cheap; every frame is still
  // decoded whole.
  VideoReader reader(video, {PixelOrder::rgb, PixelRect{256, 192, 128, 96}, 0});
  EXPECT_EQ(reader.frame_count(), 2330);
  EXPECT_EQ(reader.info().declared_frame_count, 2330);
  EXPECT_FALSE(reader.info().variable_frame_rate);
  EXPECT_NEAR(reader.info().fps, 30.0, 0.01);
  std::vector<std::uint8_t> buffer(reader.frame_bytes());
  std::vector<std::size_t> fingerprints;
  while (const auto read = reader.read(buffer.data())) {
    ASSERT_EQ(read->status, FrameStatus::ok) << read->index;
    fingerprints.push_back(fingerprint(buffer));
  }
  ASSERT_EQ(fingerprints.size(), 2330u);
  std::mt19937 random(2330);
  std::vector<std::int64_t> targets = {2329, 0, 1, 1000, 999, 2328};
  for (int i = 0; i < 6; ++i) targets.push_back(static_cast<std::int64_t>(random() % 2330));
  for (const std::int64_t target : targets) {
    reader.seek(target);
    const auto read = reader.read(buffer.data());
    ASSERT_TRUE(read);
    EXPECT_EQ(read->index, target);
    EXPECT_EQ(fingerprint(buffer), fingerprints[static_cast<std::size_t>(target)])
        << "frame " << target;
  }
}

}  // namespace
}  // namespace labpose::pipeline

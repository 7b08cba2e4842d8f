// Media for tests, made with the pipeline's own writers.
#include "tests/support/media_support.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "nets/models/models.hpp"
#include "nets/ref/backend.hpp"
#include "pipeline/synthetic/demo_project.hpp"
#include "pipeline/training/snapshot.hpp"
#include "pipeline/video/writer.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::testing {
namespace fs = std::filesystem;

fs::path copy_demo_project(const fs::path& destination) {
  static const auto made = [] {
    auto dir = std::make_unique<TempDir>();  // removed when the test program ends
    pipeline::DemoProjectOptions options;
    options.dir = dir->path();
    options.video.frames = 60;
    options.labeled_frames = 10;
    const fs::path project = pipeline::create_demo_project(options).config.parent_path();
    return std::make_pair(std::move(dir), project);
  }();
  const fs::path copy = destination / made.second.filename();
  fs::copy(made.second, copy, fs::copy_options::recursive);
  return copy / "config.yaml";
}

fs::path demo_with_random_snapshot(const fs::path& dir, int frames) {
  const fs::path config = demo_project_from_cli(dir, frames);
  const CommandResult created =
      run_labpose("--quiet create-dataset " + shell_quote(config.string()) +
                  " --net mobilenet_v2_0.35 --weights none");
  if (created.exit_code != 0) throw std::runtime_error("create-dataset failed: " + created.output);
  fs::path train;
  for (const auto& entry :
       fs::directory_iterator(config.parent_path() / "labpose-models" / "iteration-0"))
    train = entry.path() / "train";
  write_random_snapshot(train / "snapshot-7.safetensors", 7, 11);
  return config;
}

void write_random_snapshot(const fs::path& file, std::int64_t iteration, std::uint64_t seed) {
  nets::ref::RefBackend backend;
  auto net = nets::build_pose_net(backend, {"mobilenet_v2_0.35", 4, true});
  nets::initialize_pose_net(*net, seed);
  pipeline::SnapshotMetadata metadata;
  metadata.iteration = iteration;
  metadata.architecture = "mobilenet_v2_0.35";
  metadata.bodyparts = {"snout", "leftear", "rightear", "tailbase"};
  pipeline::write_snapshot(file, *net, {}, metadata);
}

void write_test_video(const fs::path& path, int frames, int width, int height) {
  pipeline::VideoWriter writer(path, {width, height, 25.0, "auto", 18});
  std::vector<std::uint8_t> frame(static_cast<std::size_t>(width) *
                                  static_cast<std::size_t>(height) * 3);
  for (int index = 0; index < frames; ++index) {
    const int cx = width / 4 + index * width / (2 * std::max(frames, 1)), cy = height / 2;
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const bool inside = (x - cx) * (x - cx) + (y - cy) * (y - cy) < (height / 6) * (height / 6);
        std::uint8_t* pixel =
            &frame[(static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                    static_cast<std::size_t>(x)) *
                   3];
        pixel[0] = inside ? 220 : static_cast<std::uint8_t>(40 + (x * 7 + y * 3) % 50);
        pixel[1] = inside ? 200 : static_cast<std::uint8_t>(60 + (x * 5 + y * 11) % 40);
        pixel[2] = inside ? 180 : 70;
      }
    }
    writer.write_bgr(frame.data(), static_cast<std::size_t>(width) * 3);
  }
  writer.close();
}

void corrupt_avi_frames(const std::filesystem::path& path, const std::vector<int>& frames,
                        double from) {
  std::string bytes = read_text(path);
  const std::size_t movi = bytes.find("movi");
  if (movi == std::string::npos) throw std::runtime_error(path.string() + " is not an AVI file");
  std::size_t at = movi + 4;
  int frame = 0;
  while (at + 8 <= bytes.size()) {
    const std::string id = bytes.substr(at, 4);
    std::uint32_t size = 0;
    std::memcpy(&size, &bytes[at + 4], 4);
    if (id == "idx1") break;
    if (id == "00dc" || id == "00db") {
      if (std::find(frames.begin(), frames.end(), frame) != frames.end()) {
        for (auto i = static_cast<std::uint32_t>(size * from); i < size; ++i)
          bytes[at + 8 + i] = from == 0.0 ? '\0' : static_cast<char>(i * 37);
      }
      ++frame;
    }
    at += 8 + size + (size & 1);
  }
  write_text(path, bytes);
}

}  // namespace labpose::testing

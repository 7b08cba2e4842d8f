// The tests' temp folders: cleaning one up must never touch what lies outside it, even through the
// links a project holds to its videos.
#include <sys/stat.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

TEST(TempDir, CleanupLeavesTheTargetsOfLinksAsTheyWere) {
  const TempDir outside;
  const fs::path video = outside / "video.mp4";
  const fs::path folder = outside / "videos";
  testing::write_text(video, "not really a video");
  fs::create_directories(folder);
  fs::permissions(video, fs::perms::owner_read | fs::perms::group_read);
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec);
  const auto video_mode = fs::status(video).permissions();
  const auto folder_mode = fs::status(folder).permissions();
  fs::path inside;
  {
    const TempDir project;
    inside = project.path();
    fs::create_directories(project / "videos");
    fs::create_symlink(video, project / "videos" / "video.mp4");
    fs::create_directory_symlink(folder, project / "linked-folder");
    // A folder the test made unreadable is still cleaned up.
    fs::create_directories(project / "locked" / "deeper");
    fs::permissions(project / "locked", fs::perms::none);
  }
  EXPECT_FALSE(fs::exists(inside));
  ASSERT_TRUE(fs::exists(video));
  EXPECT_EQ(fs::status(video).permissions(), video_mode);
  EXPECT_EQ(fs::status(folder).permissions(), folder_mode);
  fs::permissions(folder, fs::perms::owner_all);
}

}  // namespace
}  // namespace labpose

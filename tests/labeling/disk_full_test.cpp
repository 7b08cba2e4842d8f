// The labeling session's backup on a full disk: a small tmpfs (mounted by the test, so it runs as
// root and skips with the reason otherwise) is filled, a first save of the session fails, and the
// backup folder must then be absent (not half-copied), the labels unchanged, and the next save
// after space was freed must make the backup whole.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "labeling/label_store.hpp"
#include "projects/labels.hpp"
#include "tests/labeling/labeling_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::labeling {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::read_text;

// A tmpfs of `size` mounted on `point` until scope exit.
class SmallDisk {
 public:
  SmallDisk(const fs::path& point, const char* size) : point_(point) {
    fs::create_directories(point_);
    if (::geteuid() != 0) {
      reason_ = "not root: cannot mount a small tmpfs to fill";
    } else if (::mount("tmpfs", point_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                       fmt::format("size={}", size).c_str()) != 0) {
      reason_ =
          fmt::format("cannot mount a tmpfs on {}: {}", point_.string(), std::strerror(errno));
    } else {
      mounted_ = true;
    }
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(point_.c_str(), MNT_DETACH);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  const std::string& skip_reason() const { return reason_; }

 private:
  fs::path point_;
  bool mounted_ = false;
  std::string reason_;
};

// Writes `file` until the disk is full.
void fill(const fs::path& file) {
  std::FILE* out = std::fopen(file.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  const std::string block(4096, 'x');
  while (std::fwrite(block.data(), 1, block.size(), out) == block.size() && std::fflush(out) == 0) {
  }
  std::fclose(out);
}

TEST(LabelStoreDiskFull, TheSessionBackupIsWholeOrAbsentAndTriedAgain) {
  testing::TempDir dir;
  SmallDisk disk(dir.path() / "disk", "1m");
  if (!disk.skip_reason().empty()) GTEST_SKIP() << disk.skip_reason();
  const fs::path config_file = testing::make_labeling_project(dir.path() / "disk");
  const fs::path folder = config_file.parent_path() / "labeled-data" / "mouse";
  // Labels from an earlier session.
  projects::Table table =
      projects::make_label_table("Alice", {"snout", "leftear", "rightear", "tailbase"});
  for (int image = 0; image < 5; ++image) {
    table.add_row({"labeled-data", "mouse", fmt::format("img{:03}.png", image)});
    table.at(static_cast<std::size_t>(image), 0) = 10 + image;
    table.at(static_cast<std::size_t>(image), 1) = 20 + image;
  }
  const auto files = projects::label_files(folder, "Alice");
  projects::write_labels(table, files);
  const std::string csv = read_text(files.csv), h5 = read_text(files.h5);

  LabelStore store(projects::ProjectConfig::load(config_file), false);
  const fs::path filler = dir.path() / "disk" / "filler";
  fill(filler);
  try {
    store.set_point("mouse", "img000.png", "snout", 1, 2);
    FAIL() << "a save on a full disk succeeded";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "no space left")) << error.what();
    EXPECT_TRUE(contains(error.what(), folder.string())) << error.what();
  }
  // Nothing half-made: no backup folder, no temp folder, the labels as they were.
  const fs::path backups = folder / ".labpose-backups";
  EXPECT_FALSE(fs::exists(store.session_backup_dir("mouse")));
  if (fs::exists(backups)) {
    for (const auto& entry : fs::directory_iterator(backups))
      ADD_FAILURE() << "left behind: " << entry.path();
  }
  EXPECT_TRUE(read_text(files.csv) == csv) << "the CSV changed";
  EXPECT_TRUE(read_text(files.h5) == h5) << "the .h5 changed";

  // Space again: the next save makes the backup, whole, of the files as the session found them.
  fs::remove(filler);
  store.set_point("mouse", "img000.png", "snout", 1, 2);
  const fs::path backup = store.session_backup_dir("mouse");
  EXPECT_TRUE(read_text(backup / "CollectedData_Alice.csv") == csv) << "the CSV's backup differs";
  EXPECT_TRUE(read_text(backup / "CollectedData_Alice.h5") == h5) << "the .h5's backup differs";
  EXPECT_EQ(projects::read_table_csv(files.csv).at(0, 0), 1.0);
}

}  // namespace
}  // namespace labpose::labeling

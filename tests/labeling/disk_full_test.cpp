// The labeling session's backup on a full disk: a small tmpfs (testing::SmallDisk: it runs as
// root and skips with the reason otherwise) is filled, a first save of the session fails, and the
// backup folder must then be absent (not half-copied), the labels unchanged, and the next save
// after space was freed must make the backup whole.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include "labeling/label_store.hpp"
#include "projects/labels.hpp"
#include "tests/labeling/labeling_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::labeling {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::read_text;

TEST(LabelStoreDiskFull, TheSessionBackupIsWholeOrAbsentAndTriedAgain) {
  LABPOSE_REQUIRE_SMALL_DISK(disk, 1 << 20);
  const fs::path config_file = testing::make_labeling_project(disk.path());
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
  disk.fill();
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
  disk.empty();
  store.set_point("mouse", "img000.png", "snout", 1, 2);
  const fs::path backup = store.session_backup_dir("mouse");
  EXPECT_TRUE(read_text(backup / "CollectedData_Alice.csv") == csv) << "the CSV's backup differs";
  EXPECT_TRUE(read_text(backup / "CollectedData_Alice.h5") == h5) << "the .h5's backup differs";
  EXPECT_EQ(projects::read_table_csv(files.csv).at(0, 0), 1.0);
}

}  // namespace
}  // namespace labpose::labeling

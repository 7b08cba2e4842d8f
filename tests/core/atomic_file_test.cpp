// AtomicFile: whole files or nothing, previous versions intact on failure, clear errors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::read_text;
using testing::TempDir;
using testing::write_text;

std::size_t entries(const fs::path& folder) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(folder), fs::directory_iterator()));
}

TEST(AtomicFile, ReplacesTheTargetOnlyOnCommit) {
  const TempDir dir;
  const fs::path target = dir / "labels.csv";
  write_text(target, "old");
  {
    AtomicFile file(target);
    write_text(file.temp_path(), "new");
    EXPECT_EQ(read_text(target), "old") << "the target must not change before commit";
    EXPECT_EQ(entries(dir.path()), 2u);
    file.commit();
  }
  EXPECT_EQ(read_text(target), "new");
  EXPECT_EQ(entries(dir.path()), 1u) << "no temp file may stay behind";
}

TEST(AtomicFile, AbandonedWriteLeavesThePreviousVersionAndNoTemp) {
  const TempDir dir;
  const fs::path target = dir / "config.yaml";
  write_text(target, "Task: mouse\n");
  try {
    AtomicFile file(target);
    write_text(file.temp_path(), "half a fi");
    throw std::runtime_error("simulated crash while writing");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(read_text(target), "Task: mouse\n");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(AtomicFile, PiecesAreWrittenInOrderOrNotAtAll) {
  const TempDir dir;
  const fs::path target = dir / "snapshot-100.safetensors";
  write_pieces_atomically(target, [](const PieceSink& sink) {
    sink("header;");
    sink("");
    sink(std::string(100000, 'w'));
    sink(";end");
  });
  EXPECT_EQ(read_text(target), "header;" + std::string(100000, 'w') + ";end");
  // A producer that fails halfway leaves the previous file whole and no temp file.
  EXPECT_THROW(write_pieces_atomically(target,
                                       [](const PieceSink& sink) {
                                         sink("half of a new ");
                                         throw Error("the tensors ran out");
                                       }),
               Error);
  EXPECT_EQ(read_text(target), "header;" + std::string(100000, 'w') + ";end");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(AtomicFile, KeepsTheTargetsPermissions) {
  const TempDir dir;
  const fs::path target = dir / "script.sh";
  write_text(target, "#!/bin/sh\n");
  fs::permissions(target, fs::perms::owner_all | fs::perms::group_read);
  write_file_atomically(target, "#!/bin/sh\necho hi\n");
  EXPECT_EQ(fs::status(target).permissions(), fs::perms::owner_all | fs::perms::group_read);
}

TEST(AtomicFile, MissingFolderIsAClearError) {
  const TempDir dir;
  try {
    write_file_atomically(dir / "no-such-folder" / "file.txt", "x");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("does not exist"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("no-such-folder"), std::string::npos) << error.what();
  }
}

TEST(AtomicFile, TargetThatIsAFolderIsAClearError) {
  const TempDir dir;
  fs::create_directory(dir / "labels.csv");
  try {
    write_file_atomically(dir / "labels.csv", "x");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("it is a folder"), std::string::npos) << error.what();
  }
}

// Runs in a child process without root rights (root ignores folder permissions).
TEST(AtomicFile, UnwritableFolderIsAClearErrorAndTheOldFileSurvives) {
  const TempDir dir;
  const fs::path folder = dir / "locked";
  fs::create_directory(folder);
  const fs::path target = folder / "CollectedData_me.csv";
  write_text(target, "precious labels");
  fs::permissions(dir.path(), fs::perms::all);
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read |
                              fs::perms::others_exec);
  EXPECT_EXIT(
      {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(10);
        try {
          write_file_atomically(target, "overwritten");
          _exit(11);
        } catch (const Error& error) {
          const std::string message = error.what();
          const bool good = message.find("permission denied") != std::string::npos &&
                            message.find(target.string()) != std::string::npos &&
                            error.hint().find("ls -ld") != std::string::npos;
          _exit(good ? 0 : 12);
        }
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(read_text(target), "precious labels");
}

TEST(AtomicFile, KeepBackupCopiesThePreviousVersion) {
  const TempDir dir;
  const fs::path target = dir / "CollectedData_me.h5";
  write_text(target, "version 1");
  const fs::path backup = keep_backup(target);
  EXPECT_EQ(backup, dir / "CollectedData_me.h5.bak");
  write_file_atomically(target, "version 2");
  EXPECT_EQ(read_text(backup), "version 1");
  EXPECT_EQ(read_text(target), "version 2");
}

// The temp files in `folder` (hidden names with ".tmp-").
std::vector<std::string> temp_files(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp-") != std::string::npos) names.push_back(name);
  }
  return names;
}

TEST(AtomicFile, TempFilesOfKilledWritersAreRemovedOnTheNextWrite) {
  const TempDir dir;
  const fs::path target = dir / "CollectedData_me.csv";
  write_text(target, "labels v1");
  // A writer killed between creating its temp file and renaming it (as kill -9 does), and one
  // killed while it filled a temp folder (a project being created, a session backup).
  const pid_t child = fork();
  if (child == 0) {
    AtomicFile file(target);
    write_text(file.temp_path(), "half of labels v2");
    const fs::path folder = temp_name_for(dir / "project");
    fs::create_directories(folder / "videos");
    write_text(folder / "videos" / "mouse.mp4", "half a video");
    _exit(0);  // no destructor, no commit, no rename
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(temp_files(dir.path()).size(), 2u);
  // An older labpose's name for a dead writer's temp file.
  write_text(dir / fmt::format(".CollectedData_me.h5.tmp-{}-3", child), "x");
  // Temp files that are not stale: a process that still runs (this one), another machine's (a
  // project on a network share).
  const std::string live = fmt::format(".CollectedData_me.csv.tmp-{}-7", getpid());
  const std::string other_machine = ".CollectedData_me.csv.tmp-0badf00d-1-0";
  for (const std::string& name : {live, other_machine}) write_text(dir / name, "x");

  write_file_atomically(target, "labels v2");
  EXPECT_EQ(read_text(target), "labels v2");
  std::vector<std::string> left = temp_files(dir.path());
  std::sort(left.begin(), left.end());
  std::vector<std::string> expected{live, other_machine};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(left, expected);
}

TEST(AtomicFile, AFullDiskNamesThePlaceAndKeepsThePreviousFile) {
  LABPOSE_REQUIRE_SMALL_DISK(disk, std::size_t{64} * 1024);
  const fs::path folder = disk / "labeled-data";
  fs::create_directories(folder);
  const fs::path target = folder / "CollectedData_me.csv";
  write_file_atomically(target, "precious labels");
  disk.fill();
  try {
    write_file_atomically(target, std::string(std::size_t{200} * 1024, 'x'));
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_TRUE(testing::contains(
        error.what(), "cannot write " + target.string() + ": no space left on " + folder.string()))
        << error.what();
    EXPECT_TRUE(testing::contains(error.hint(), "df -h " + folder.string())) << error.hint();
  }
  EXPECT_EQ(read_text(target), "precious labels");
  EXPECT_TRUE(temp_files(folder).empty());
  disk.empty();
  write_file_atomically(target, "more labels");
  EXPECT_EQ(read_text(target), "more labels");
}

TEST(AtomicFile, ABackupOnAFullDiskNamesThePlace) {
  LABPOSE_REQUIRE_SMALL_DISK(disk, std::size_t{256} * 1024);
  const fs::path target = disk / "CollectedData_me.h5";
  write_file_atomically(target, std::string(std::size_t{100} * 1024, 'l'));
  disk.fill(std::size_t{16} * 1024);
  try {
    keep_backup(target);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_TRUE(testing::contains(error.what(), "no space left on " + disk.path().string()))
        << error.what();
  }
  EXPECT_FALSE(fs::exists(disk / "CollectedData_me.h5.bak"));
  EXPECT_TRUE(temp_files(disk.path()).empty());
  disk.empty();
  EXPECT_EQ(read_text(keep_backup(target)), std::string(std::size_t{100} * 1024, 'l'));
}

TEST(ReadFile, NamesTheMissingFile) {
  const TempDir dir;
  try {
    read_file(dir / "missing.yaml");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("missing.yaml: no such file"), std::string::npos)
        << error.what();
  }
}

TEST(ReadFile, ReadsEveryByteOfAnyFile) {
  const TempDir dir;
  std::string bytes(std::size_t{3} * 1024 * 1024 + 7, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 % 251);
  write_text(dir / "weights.bin", bytes);
  EXPECT_EQ(read_file(dir / "weights.bin"), bytes);
  write_text(dir / "empty.txt", "");
  EXPECT_EQ(read_file(dir / "empty.txt"), "");
  // Files whose size the kernel reports as 0 are read to their end all the same.
  const std::string status = read_file("/proc/self/status");
  EXPECT_NE(status.find("Name:"), std::string::npos);
}

}  // namespace
}  // namespace labpose

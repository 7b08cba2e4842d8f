// HDF5 tables whatever their bytes and whatever the disk does: damaged label and track files give
// an Error naming the file (never a crash of labpose, even where libhdf5 itself crashes), and a
// write that fails (full disk, file size limit) keeps the old file and leaves libhdf5 in a state
// that can still shut down. Not the format round trips (table_hdf5_test.cpp).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <random>
#include <thread>

#include "core/error.hpp"
#include "projects/child_process.hpp"
#include "projects/table.hpp"
#include "projects/table_wire.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::projects {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::TempDir;

Table label_table(std::size_t rows, std::size_t bodyparts) {
  Table table;
  table.column_level_names = {"scorer", "bodyparts", "coords"};
  for (std::size_t b = 0; b < bodyparts; ++b) {
    table.columns.push_back({"Pranav", "part" + std::to_string(b), "x"});
    table.columns.push_back({"Pranav", "part" + std::to_string(b), "y"});
  }
  table.index_levels = 3;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t row =
        table.add_row({"labeled-data", "m4s1", "img" + std::to_string(1000 + r) + ".png"});
    for (std::size_t c = 0; c < table.column_count(); ++c)
      table.at(row, c) = 10.0 * static_cast<double>(r) + static_cast<double>(c);
  }
  return table;
}

Table track_table(std::size_t frames) {
  Table table;
  table.column_level_names = {"scorer", "bodyparts", "coords"};
  for (const char* coord : {"x", "y", "likelihood"})
    table.columns.push_back({"DLC_net", "snout", coord});
  table.integer_index = true;
  for (std::size_t f = 0; f < frames; ++f) {
    const std::size_t row = table.add_row({std::to_string(f)});
    for (std::size_t c = 0; c < 3; ++c)
      table.at(row, c) = 0.5 * static_cast<double>(f) + static_cast<double>(c);
  }
  return table;
}

// What happens to one damaged copy: read back, it is a table or an Error naming the file.
struct Outcomes {
  int tables = 0, errors = 0;
};

void read_damaged(const fs::path& file, Outcomes& outcomes, const std::string& what) {
  try {
    read_table_hdf5(file);
    ++outcomes.tables;
  } catch (const Error& error) {
    ++outcomes.errors;
    EXPECT_TRUE(contains(error.what(), file.string())) << what << ": " << error.what();
  } catch (const std::exception& other) {
    ADD_FAILURE() << what << ": not a labpose::Error: " << other.what();
  }
}

// Each of label and track table, written by write_table_hdf5, damaged at a fixed-seed sample of
// byte positions (one byte, or a few bytes close together as a bad sector or a bad copy would)
// and read back. Before the reads were isolated this crashed the test program inside libhdf5
// (heap out-of-bounds reads in its object header decoding) and threw std::bad_alloc from sizes
// taken unchecked from the file.
TEST(TableHdf5Damage, EveryDamagedCopyGivesATableOrAnErrorNamingTheFile) {
  const TempDir dir;
  std::mt19937 random(16);
  for (const bool tracks : {false, true}) {
    const fs::path good = dir / (tracks ? "tracks.h5" : "CollectedData_Pranav.h5");
    write_table_hdf5(tracks ? track_table(20) : label_table(4, 3), good);
    const std::string bytes = testing::read_text(good);
    const fs::path damaged = dir / (tracks ? "damaged-tracks.h5" : "CollectedData_damaged.h5");
    Outcomes outcomes;
    for (int trial = 0; trial < 150; ++trial) {
      std::string copy = bytes;
      const std::size_t at = random() % copy.size();
      const std::size_t count = trial % 3 == 0 ? 1 + random() % 8 : 1;
      for (std::size_t i = 0; i < count && at + i < copy.size(); ++i)
        copy[at + i] = static_cast<char>(random() % 256);
      testing::write_text(damaged, copy);
      read_damaged(damaged, outcomes, "byte " + std::to_string(at));
    }
    EXPECT_GT(outcomes.errors, 20);  // the sample does reach the structure, not only the values
    std::printf("%s: %d tables, %d errors\n", good.filename().c_str(), outcomes.tables,
                outcomes.errors);
  }
}

// The sizes that made the reader allocate without bound (std::bad_alloc, or gigabytes zeroed for
// seconds): dataset dimensions. Every 8-byte little-endian field of the file that holds the row
// count (13) or the column count (6), as dataspace messages store dimensions, gets its byte 3 and
// its byte 7 set to 0x7f and to 0xff in turn (billions, or 2^62 and more).
TEST(TableHdf5Damage, SizesFromTheFileAreBoundedByTheFile) {
  const TempDir dir;
  const Table table = label_table(13, 3);
  write_table_hdf5(table, dir / "good.h5");
  const std::string bytes = testing::read_text(dir / "good.h5");
  Outcomes outcomes;
  int fields = 0;
  for (std::size_t at = 0; at + 8 <= bytes.size(); ++at) {
    std::uint64_t number = 0;
    std::memcpy(&number, bytes.data() + at, 8);
    if (number != table.row_count() && number != table.column_count()) continue;
    ++fields;
    for (const std::size_t byte : {std::size_t{3}, std::size_t{7}}) {
      for (const char value : {'\x7f', '\xff'}) {
        std::string copy = bytes;
        copy[at + byte] = value;
        testing::write_text(dir / "bad.h5", copy);
        read_damaged(dir / "bad.h5", outcomes, "byte " + std::to_string(at + byte));
      }
    }
  }
  std::printf("%d size fields, %d tables, %d errors\n", fields, outcomes.tables, outcomes.errors);
  EXPECT_GE(fields, 10);  // axis0, axis1, block0_items: codes and levels; block0_values
  EXPECT_GT(outcomes.errors, fields);
}

// What read_table_hdf5 says when its child did not answer. (A file that crashes libhdf5 does so
// only for some states of the heap, so the crash is made here.)
TEST(TableHdf5Damage, AChildThatCrashedOrHungGivesAnErrorNamingTheFile) {
  using namespace std::chrono_literals;
  const fs::path file = "labeled-data/m4s1/CollectedData_Pranav.h5";
  const ChildResult crashed = run_in_child(
      [] {
        std::raise(SIGSEGV);
        return std::string();
      },
      60s);
  const Error crash = wire::failed_read(file, crashed, 61s);
  EXPECT_EQ(std::string(crash.what()),
            "labeled-data/m4s1/CollectedData_Pranav.h5 is damaged (the HDF5 library crashed "
            "reading it: SIGSEGV (invalid memory access))");
  EXPECT_TRUE(contains(crash.hint(), "CSV beside it")) << crash.hint();
  EXPECT_EQ(crash.kind(), ErrorKind::failure);

  const ChildResult hung = run_in_child(
      [] {
        for (;;) pause();
        return std::string();
      },
      100ms);
  const Error hang = wire::failed_read(file, hung, 61s);
  EXPECT_TRUE(contains(hang.what(), file.string() + " is damaged (the HDF5 library was still "
                                                    "reading it after 61 s)"))
      << hang.what();

  ChildResult interrupted;
  interrupted.status = ChildResult::Status::interrupted;
  EXPECT_EQ(wire::failed_read(file, interrupted, 61s).kind(), ErrorKind::interrupted);
}

// The label server and analysis read in one thread while another writes. The child process of a
// read must not inherit libhdf5's internal lock held by the writing thread (it would wait for it
// forever, and the read would fail at its deadline a minute later).
TEST(TableHdf5Damage, ReadsWhileAnotherThreadWrites) {
  const TempDir dir;
  const Table labels = label_table(30, 4);
  write_table_hdf5(labels, dir / "read.h5");
  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  struct Writer {
    std::atomic<bool>& stop;
    std::thread thread;
    ~Writer() {
      stop.store(true);
      thread.join();
    }
  } writer{stop, std::thread([&] {
             while (!stop.load()) {
               write_table_hdf5(track_table(500), dir / "written.h5");
               writes.fetch_add(1);
             }
           })};
  const auto start = std::chrono::steady_clock::now();
  int reads = 0;
  // At least 40 reads, and until the writer has written a few times beside them.
  while (reads < 40 || writes.load() < 5) {
    ASSERT_TRUE(same_table(read_table_hdf5(dir / "read.h5"), labels));
    ++reads;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d reads beside %d writes in %.2f s\n", reads, writes.load(), seconds);
}

// ---- failed writes (defect: exit status 139 after "disk full") ----------------------------------

// Runs `body` in a child process and returns its exit status as waitpid reports it. The child ends
// with H5close(), libhdf5's own shutdown (what its atexit handler runs): after a failed write it
// crashed there, closing a file identifier left half-freed by a failed H5Fclose.
template <typename Body>
int status_of_child(Body body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 0;
    try {
      code = body();
    } catch (...) {
      code = 90;
    }
    H5close();
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// 0 when write_table_hdf5 refused the big table with an Error that names the file and `reason`,
// and the old file is still there, whole.
int write_fails_and_keeps_the_old_file(const fs::path& file, const std::string& reason) {
  const Table old_table = label_table(2, 2);
  const Table big = label_table(2000, 20);
  try {
    write_table_hdf5(big, file);
    std::fprintf(stderr, "the write succeeded\n");
    return 10;
  } catch (const Error& error) {
    if (!contains(error.what(), file.string()) || !contains(error.what(), reason)) {
      std::fprintf(stderr, "unexpected message: %s\n", error.what());
      return 11;
    }
  }
  if (!same_table(read_table_hdf5(file), old_table)) return 12;
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(file.parent_path())) ++entries;
  return entries == 1 ? 0 : 13;  // no temp file left beside it
}

// Runs everywhere: a file size limit (RLIMIT_FSIZE) makes the big write fail like a full disk.
TEST(TableHdf5FailedWrite, FileSizeLimitGivesAnErrorAndLibhdf5ShutsDownCleanly) {
  const TempDir dir;
  write_table_hdf5(label_table(2, 2), dir / "labels.h5");
  const int status = status_of_child([&] {
    std::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead of killing the process
    const rlim_t bytes = rlim_t{64} * 1024;
    const rlimit limit{bytes, bytes};
    setrlimit(RLIMIT_FSIZE, &limit);
    return write_fails_and_keeps_the_old_file(dir / "labels.h5", "file size limit");
  });
  EXPECT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
}

// A real full disk: a 256 KB tmpfs (as root; skipped where mounting is not allowed).
TEST(TableHdf5FailedWrite, FullDiskGivesNoSpaceLeftAndLibhdf5ShutsDownCleanly) {
  const TempDir dir;
  const fs::path mount_point = dir / "small-disk";
  fs::create_directories(mount_point);
  if (mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=256k") != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs root): " << std::strerror(errno);
  struct Unmount {
    fs::path path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{mount_point};
  write_table_hdf5(label_table(2, 2), mount_point / "labels.h5");
  const int status = status_of_child([&] {
    return write_fails_and_keeps_the_old_file(mount_point / "labels.h5", "no space left");
  });
  EXPECT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
}

}  // namespace
}  // namespace labpose::projects

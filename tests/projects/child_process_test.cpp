// run_in_child: what the child returns comes back whole, and every way a child can end (a crash,
// an exception, an endless loop, Ctrl-C, SIGKILL) is told apart, never taking this process with
// it. Not the HDF5 reads that use it (table_hdf5_damage_test.cpp).
#include "projects/child_process.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <stdexcept>

namespace labpose::projects {
namespace {
using namespace std::chrono_literals;
using Status = ChildResult::Status;

TEST(ChildProcess, ReturnsWhatTheWorkReturnsEvenMegabytes) {
  EXPECT_EQ(run_in_child([] { return std::string("answer"); }, 60s).output, "answer");
  const ChildResult empty = run_in_child([] { return std::string(); }, 60s);
  EXPECT_EQ(empty.status, Status::finished);
  EXPECT_EQ(empty.output, "");
  // Far more than a pipe holds at once: the parent reads while the child writes.
  std::string big(20 << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7919 % 251);
  const ChildResult result = run_in_child([&] { return big; }, 60s);
  EXPECT_EQ(result.status, Status::finished);
  EXPECT_TRUE(result.output == big) << result.output.size() << " bytes came back";
}

TEST(ChildProcess, ACrashEndsOnlyTheChild) {
  const ChildResult result = run_in_child(
      [] {
        std::raise(SIGSEGV);
        return std::string("not reached");
      },
      60s);
  EXPECT_EQ(result.status, Status::crashed);
  EXPECT_EQ(result.signal, SIGSEGV);
  EXPECT_EQ(describe_signal(result.signal), "SIGSEGV (invalid memory access)");
  const ChildResult aborted = run_in_child(
      [] {
        std::abort();
        return std::string();
      },
      60s);
  EXPECT_EQ(aborted.status, Status::crashed);
  EXPECT_EQ(aborted.signal, SIGABRT);
}

TEST(ChildProcess, WorkThatThrowsOrExitsWithoutAnsweringIsACrash) {
  const ChildResult threw =
      run_in_child([]() -> std::string { throw std::runtime_error("the work failed"); }, 60s);
  EXPECT_EQ(threw.status, Status::crashed);
  EXPECT_EQ(threw.signal, 0);
  EXPECT_NE(threw.exit_code, 0);
  const ChildResult exited = run_in_child(
      [] {
        _exit(3);
        return std::string();
      },
      60s);
  EXPECT_EQ(exited.status, Status::crashed);
  EXPECT_EQ(exited.exit_code, 3);
}

TEST(ChildProcess, AChildStillRunningAtTheDeadlineIsKilled) {
  const auto start = std::chrono::steady_clock::now();
  const ChildResult result = run_in_child(
      [] {
        for (;;) pause();
        return std::string();
      },
      200ms);
  EXPECT_EQ(result.status, Status::timed_out);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
}

TEST(ChildProcess, InterruptAndKillAreNotCrashes) {
  const ChildResult interrupted = run_in_child(
      [] {
        std::raise(SIGINT);
        return std::string();
      },
      60s);
  EXPECT_EQ(interrupted.status, Status::interrupted);
  EXPECT_EQ(interrupted.signal, SIGINT);
  const ChildResult killed = run_in_child(
      [] {
        std::raise(SIGKILL);
        return std::string();
      },
      60s);
  EXPECT_EQ(killed.status, Status::killed);
}

// The child ends with _exit: what this process buffered in stdio is not written a second time by
// the child (exit() would flush the copy of the buffer it inherited).
TEST(ChildProcess, TheChildDoesNotFlushThisProcesssStdioBuffers) {
  char name[] = "/tmp/labpose-child-stdio-XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  FILE* file = fdopen(fd, "w");
  ASSERT_NE(file, nullptr);
  std::fputs("buffered once", file);  // still in the FILE's buffer at the fork
  const ChildResult result = run_in_child([] { return std::string("done"); }, 60s);
  EXPECT_EQ(result.status, Status::finished);
  std::fclose(file);
  FILE* in = std::fopen(name, "r");
  ASSERT_NE(in, nullptr);
  char text[64] = {};
  const std::size_t length = std::fread(text, 1, sizeof text - 1, in);
  std::fclose(in);
  std::remove(name);
  EXPECT_EQ(std::string(text, length), "buffered once");
}

}  // namespace
}  // namespace labpose::projects

// Runs a function in a forked child process, so that a crash inside a library that is not
// hardened against hostile input (libhdf5 reading a damaged file) ends the child instead of
// labpose. Not a sandbox: the child shares this process's files and rights. Not for work that
// starts threads or takes a lock another thread may hold (see run_in_child).
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

namespace labpose::projects {

struct ChildResult {
  enum class Status {
    finished,     // `output` is all the work returned
    crashed,      // ended by a signal such as SIGSEGV, or exited without answering
    interrupted,  // ended by SIGINT, SIGTERM, SIGHUP or SIGQUIT (Ctrl-C)
    killed,       // ended by SIGKILL: out of memory, or stopped by someone
    timed_out,    // still running at the deadline: it was killed
  };
  Status status = Status::crashed;
  std::string output;
  int signal = 0;     // the signal that ended the child, if one did
  int exit_code = 0;  // its exit status, if it exited
};

/// Forks; the child runs `work`, sends back the bytes it returns and ends with _exit (no atexit
/// handlers, no flush of this process's stdio buffers). Waits at most `deadline` for the answer.
/// Between fork and `work` the child does only async-signal-safe things (no core file, default
/// handlers for crash signals, dies with its parent). In a program with threads, `work` must not
/// need a lock that another thread may hold at the fork: memory allocation is safe (glibc
/// prepares it for fork), and a library's own locks are made safe by holding `held_across_fork`
/// (e.g. the lock of every use of that library), which is locked just for the fork. Throws Error
/// when no child can be started.
ChildResult run_in_child(const std::function<std::string()>& work,
                         std::chrono::milliseconds deadline,
                         std::mutex* held_across_fork = nullptr);

/// A few words for a signal number: "SIGSEGV (invalid memory access)".
std::string describe_signal(int signal);

}  // namespace labpose::projects

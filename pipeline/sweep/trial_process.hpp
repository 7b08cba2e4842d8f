// One trial's training as a child process (`labpose train ...`), so that trials run side by side
// on their own devices and threads, and a trial that fails or crashes ends alone. The child's
// output goes to the trial's log; it holds the trial's lock with its parent; it is stopped with
// SIGTERM (a snapshot, then exit status 3) when the sweep stops or its process dies. Not the choice
// of what to run (scheduler.hpp).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace labpose::pipeline {

struct TrialCommand {
  std::filesystem::path executable;                              // labpose
  std::vector<std::string> arguments;                            // after the program name
  std::vector<std::pair<std::string, std::string>> environment;  // set on top of this process's
  std::filesystem::path log_file;                                // stdout and stderr, appended
  int held_descriptor = -1;  // a lock the child keeps until it ends; -1: none
};

struct TrialExit {
  enum class Kind {
    finished,     // exit status 0
    failed,       // another exit status (1: an error, 2: a setting train refused)
    interrupted,  // exit status 3 (it saved a snapshot), or ended by a stop signal we sent
    crashed,      // ended by a signal we did not send (a crash, the out-of-memory killer)
  };
  Kind kind = Kind::finished;
  int exit_code = 0;
  int signal = 0;
};

/// Runs `command` and waits for it; while it runs, `should_stop` is asked every 100 ms and, once
/// it says yes, the child gets SIGTERM (once). Throws Error when the child cannot be started.
TrialExit run_trial_process(const TrialCommand& command, const std::function<bool()>& should_stop);

/// The command line in words, for logs: `labpose train config.yaml --shuffle 3`.
std::string command_text(const TrialCommand& command);

/// The last `error:` line of a log and the `hint:` after it, for a failed trial's message; empty
/// when there is none.
std::string last_error_of_log(const std::filesystem::path& log_file);

}  // namespace labpose::pipeline

// fork + exec of a trial, with only async-signal-safe calls between them (the sweep has threads).
#include "pipeline/sweep/trial_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

extern char** environ;

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

// The child's environment: this process's with `overrides` replacing or adding variables.
std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const std::size_t equals = text.find('=');
    if (equals != std::string::npos) variables[text.substr(0, equals)] = text.substr(equals + 1);
  }
  for (const auto& [name, value] : overrides) variables[name] = value;
  std::vector<std::string> environment;
  environment.reserve(variables.size());
  for (const auto& [name, value] : variables) environment.push_back(name + "=" + value);
  return environment;
}

std::vector<char*> pointers_to(std::vector<std::string>& texts) {
  std::vector<char*> pointers;
  pointers.reserve(texts.size() + 1);
  for (auto& text : texts) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// In the child, between fork and exec: async-signal-safe calls only.
[[noreturn]] void become_trial(const char* executable, char* const* argv, char* const* envp,
                               const char* log_file, int held, pid_t parent) {
  // SIGTERM when the sweep's process ends, however it ends (a snapshot is saved).
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(3);
  // A process group of its own: a Ctrl-C at the terminal reaches the sweep alone, which passes a
  // single SIGTERM on (a second signal would stop the trial before its snapshot).
  ::setpgid(0, 0);
  // A copy without close-on-exec keeps the trial's lock held until the child ends too; made first,
  // while no standard descriptor has been replaced.
  if (held >= 0) ::fcntl(held, F_DUPFD, 10);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  const int log = ::open(log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log >= 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
  }
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  ::execve(executable, argv, envp);
  const char message[] = "error: cannot start labpose for this trial\n";
  [[maybe_unused]] const auto written = ::write(STDERR_FILENO, message, sizeof(message) - 1);
  ::_exit(127);
}

}  // namespace

TrialExit run_trial_process(const TrialCommand& command, const std::function<bool()>& should_stop) {
  std::vector<std::string> argument_texts;
  argument_texts.push_back(command.executable.string());
  argument_texts.insert(argument_texts.end(), command.arguments.begin(), command.arguments.end());
  std::vector<std::string> environment = child_environment(command.environment);
  const std::vector<char*> argv = pointers_to(argument_texts);
  const std::vector<char*> envp = pointers_to(environment);
  const std::string executable = command.executable.string();
  const std::string log_file = command.log_file.string();
  const pid_t parent = ::getpid();

  const pid_t child = ::fork();
  if (child < 0) {
    throw Error(fmt::format("cannot start a trial: fork failed: {}", describe_errno(errno)),
                "the machine may be out of memory or processes");
  }
  if (child == 0) {
    become_trial(executable.c_str(), argv.data(), envp.data(), log_file.c_str(),
                 command.held_descriptor, parent);
  }
  bool stop_sent = false;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 && errno != EINTR) {
      throw Error(fmt::format("lost the trial's process {}: {}", child, describe_errno(errno)));
    }
    if (!stop_sent && should_stop()) {
      ::kill(child, SIGTERM);
      stop_sent = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  TrialExit result;
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
    result.kind = result.exit_code == 0   ? TrialExit::Kind::finished
                  : result.exit_code == 3 ? TrialExit::Kind::interrupted
                                          : TrialExit::Kind::failed;
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    const bool asked = stop_sent && (result.signal == SIGTERM || result.signal == SIGINT ||
                                     result.signal == SIGKILL);
    result.kind = asked ? TrialExit::Kind::interrupted : TrialExit::Kind::crashed;
  }
  return result;
}

std::string command_text(const TrialCommand& command) {
  return fmt::format("{} {}", command.executable.filename().string(),
                     fmt::join(command.arguments, " "));
}

std::string last_error_of_log(const fs::path& log_file) {
  std::ifstream in(log_file);
  std::string line, error, hint;
  while (std::getline(in, line)) {
    if (line.starts_with("error: ")) {
      error = line.substr(7);
      hint.clear();
    } else if (line.starts_with("hint: ") && !error.empty()) {
      hint = line.substr(6);
    }
  }
  if (error.empty()) return {};
  return hint.empty() ? error : error + " (" + hint + ")";
}

}  // namespace labpose::pipeline

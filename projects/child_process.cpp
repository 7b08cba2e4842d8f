// run_in_child: fork, a pipe for the answer (length-prefixed, so a complete answer is recognised
// even where a SIGCHLD handler of the program reaps the child first), poll with a deadline.
#include "projects/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>

#include <fmt/core.h>

#include "core/error.hpp"

namespace labpose::projects {
namespace {

constexpr int kWorkThrew = 70;   // the child's exit status when `work` threw
constexpr int kPipeFailed = 71;  // ... when it could not send the answer

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t put = ::write(fd, data, size);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    data += put;
    size -= static_cast<std::size_t>(put);
  }
  return true;
}

// Async-signal-safe calls only: the child of a program with threads may find any lock held.
void prepare_child() {
  // A damaged input is not a labpose bug: no core file for the crash it may cause.
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  // Crash signals end the child at once, whatever handler the program (or a sanitizer) installed.
  struct sigaction fatal {};
  fatal.sa_handler = SIG_DFL;
  sigemptyset(&fatal.sa_mask);
  sigset_t crash_signals;
  sigemptyset(&crash_signals);
  for (const int number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP}) {
    sigaction(number, &fatal, nullptr);
    sigaddset(&crash_signals, number);
  }
  sigprocmask(SIG_UNBLOCK, &crash_signals, nullptr);
  // Never outlive the program (if it is killed while the child reads).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
}

[[noreturn]] void child_main(int answer_fd, const std::function<std::string()>& work) {
  prepare_child();
  std::string output;
  try {
    output = work();
  } catch (...) {
    _exit(kWorkThrew);
  }
  const std::uint64_t size = output.size();
  if (!write_all(answer_fd, reinterpret_cast<const char*>(&size), sizeof size) ||
      !write_all(answer_fd, output.data(), output.size())) {
    _exit(kPipeFailed);
  }
  _exit(0);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// Reads the length-prefixed answer until it is complete, the pipe closes or the deadline passes.
// Returns false at the deadline.
bool receive(int fd, std::chrono::steady_clock::time_point deadline, std::string& received,
             bool& complete) {
  std::uint64_t expected = 0;
  char buffer[65536];
  for (;;) {
    if (received.size() >= sizeof expected) {
      std::memcpy(&expected, received.data(), sizeof expected);
      if (received.size() - sizeof expected >= expected) {
        complete = received.size() - sizeof expected == expected;
        return true;
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    pollfd readable{fd, POLLIN, 0};
    const int ready = ::poll(&readable, 1, static_cast<int>(std::min<long long>(left, 60'000)));
    if (ready < 0 && errno != EINTR) return true;  // cannot wait: take what came
    if (ready <= 0) continue;
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return true;  // closed: the child ended
    received.append(buffer, static_cast<std::size_t>(got));
  }
}

}  // namespace

ChildResult run_in_child(const std::function<std::string()>& work,
                         std::chrono::milliseconds deadline, std::mutex* held_across_fork) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw Error(fmt::format("cannot start a helper process: {}", std::strerror(errno)),
                "the system is out of processes or open files; close some programs and try again");
  }
  Fd answer(fds[0]), child_end(fds[1]);
  pid_t pid = -1;
  {
    std::unique_lock<std::mutex> lock;
    if (held_across_fork != nullptr) lock = std::unique_lock(*held_across_fork);
    pid = ::fork();
  }
  if (pid == 0) child_main(fds[1], work);
  if (pid < 0) {
    throw Error(fmt::format("cannot start a helper process: {}", std::strerror(errno)),
                "the system is out of processes or memory; close some programs and try again");
  }
  child_end.reset();  // so that the pipe closes when the child ends

  ChildResult result;
  std::string received;
  bool complete = false;
  const bool in_time =
      receive(answer.get(), std::chrono::steady_clock::now() + deadline, received, complete);
  if (!in_time) ::kill(pid, SIGKILL);
  answer.reset();
  int status = 0;
  pid_t waited = -1;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);

  if (!in_time) {
    result.status = ChildResult::Status::timed_out;
    return result;
  }
  const bool exited_cleanly = waited < 0 ? complete  // reaped by someone else: trust the answer
                                         : WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (complete && exited_cleanly) {
    result.status = ChildResult::Status::finished;
    result.output = received.substr(sizeof(std::uint64_t));
    return result;
  }
  if (waited >= 0 && WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    switch (result.signal) {
      case SIGINT:
      case SIGTERM:
      case SIGHUP:
      case SIGQUIT:
        result.status = ChildResult::Status::interrupted;
        break;
      case SIGKILL:
        result.status = ChildResult::Status::killed;
        break;
      default:
        result.status = ChildResult::Status::crashed;
    }
    return result;
  }
  result.status = ChildResult::Status::crashed;
  result.exit_code = waited >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string describe_signal(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic error)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGABRT:
      return "SIGABRT (aborted)";
    case SIGKILL:
      return "SIGKILL (killed)";
    default:
      return fmt::format("signal {} ({})", signal, strsignal(signal));
  }
}

}  // namespace labpose::projects

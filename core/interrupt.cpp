// Signal handlers that only set a flag.
#include "core/interrupt.hpp"

#include <atomic>
#include <csignal>

#include "core/error.hpp"

namespace labpose {
namespace {

std::atomic<int> g_signal{0};  // 0: none; -1: request_interrupt(); else the signal number
struct sigaction g_previous_int, g_previous_term;
std::atomic<bool> g_installed{false};

extern "C" void on_signal(int number) {
  if (g_signal.load() != 0) {
    // The second Ctrl-C: give up waiting and die as usual. A repeated SIGTERM is not a person
    // insisting but a process manager saying it twice (a cluster signals every process of a job,
    // a parent forwards it): the job is stopping already.
    if (number != SIGINT) return;
    sigaction(number, &g_previous_int, nullptr);
    std::raise(number);
    return;
  }
  g_signal.store(number);
}

}  // namespace

InterruptHandler::InterruptHandler() {
  LABPOSE_ASSERT(!g_installed.exchange(true));
  g_signal.store(0);
  struct sigaction action = {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

InterruptHandler::~InterruptHandler() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
  g_signal.store(0);  // handled: the next job starts afresh
  g_installed.store(false);
}

bool interrupt_requested() {
  return g_signal.load() != 0;
}

void request_interrupt() {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, -1);
}

const char* interrupt_reason() {
  switch (g_signal.load()) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "request";
  }
}

}  // namespace labpose

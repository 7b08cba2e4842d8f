// Console state and the stderr writer; one mutex orders log lines and progress redraws.
#include "core/console.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace labpose::console {
namespace {

bool env_flag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' && std::string_view(value) != "0";
}

std::atomic<Verbosity> g_verbosity{Verbosity::normal};
std::atomic<bool> g_headless{env_flag("LABPOSE_HEADLESS")};
const bool g_terminal = isatty(STDERR_FILENO) == 1 && !env_flag("LABPOSE_PLAIN_OUTPUT");
std::mutex g_mutex;
std::string g_status;  // the live status line currently drawn, guarded by g_mutex

void clear_status_locked() {
  if (!g_status.empty()) std::fputs("\r\033[K", stderr);
}

void draw_status_locked() {
  if (!g_status.empty()) std::fputs(g_status.c_str(), stderr);
}

}  // namespace

void set_verbosity(Verbosity verbosity) {
  g_verbosity = verbosity;
}
Verbosity verbosity() {
  return g_verbosity;
}
bool headless() {
  return g_headless;
}
void set_headless(bool headless) {
  g_headless = headless;
}
bool stderr_is_terminal() {
  return g_terminal;
}

void write_line(std::string_view line) {
  std::lock_guard lock(g_mutex);
  clear_status_locked();
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fputc('\n', stderr);
  draw_status_locked();
  std::fflush(stderr);
}

void set_status_line(std::string_view line) {
  std::lock_guard lock(g_mutex);
  clear_status_locked();
  g_status.assign(line);
  draw_status_locked();
  std::fflush(stderr);
}

void print_error(std::string_view message, std::string_view hint) {
  set_status_line("");
  std::lock_guard lock(g_mutex);
  std::fprintf(stderr, "error: %.*s\n", static_cast<int>(message.size()), message.data());
  if (!hint.empty())
    std::fprintf(stderr, "hint: %.*s\n", static_cast<int>(hint.size()), hint.data());
  std::fflush(stderr);
}

}  // namespace labpose::console

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
std::function<void(std::string_view)> g_writer;  // guarded by g_mutex; empty: stderr
std::atomic<bool> g_writer_live{false};
std::atomic<bool> g_has_writer{false};

void emit_locked(std::string_view text) {
  if (g_writer) {
    g_writer(text);
  } else {
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
}

void flush_locked() {
  if (!g_writer) std::fflush(stderr);
}

void clear_status_locked() {
  // A terminal erases the line; a notebook's output replaces the text after a carriage return.
  if (!g_status.empty()) emit_locked(g_writer ? "\r" : "\r\033[K");
}

void draw_status_locked() {
  if (!g_status.empty()) emit_locked(g_status);
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
  return g_has_writer ? g_writer_live.load() : g_terminal;
}

void set_writer(std::function<void(std::string_view text)> writer, bool live) {
  std::lock_guard lock(g_mutex);
  g_status.clear();
  g_has_writer = static_cast<bool>(writer);
  g_writer_live = live;
  g_writer = std::move(writer);
}

void write_line(std::string_view line) {
  std::lock_guard lock(g_mutex);
  clear_status_locked();
  emit_locked(std::string(line) + '\n');
  draw_status_locked();
  flush_locked();
}

void set_status_line(std::string_view line) {
  std::lock_guard lock(g_mutex);
  clear_status_locked();
  g_status.assign(line);
  draw_status_locked();
  flush_locked();
}

void print_error(std::string_view message, std::string_view hint) {
  set_status_line("");
  std::lock_guard lock(g_mutex);
  emit_locked(fmt::format("error: {}\n", message));
  if (!hint.empty()) emit_locked(fmt::format("hint: {}\n", hint));
  flush_locked();
}

}  // namespace labpose::console

// Console output shared by every command: verbosity (--quiet/--verbose), headless mode
// (--headless, LABPOSE_HEADLESS=1), and log lines on stderr that do not tear a progress bar.
// Results a user pipes (paths, tables) go to stdout through the commands themselves, not here.
#pragma once

#include <fmt/core.h>

#include <functional>
#include <string>
#include <string_view>

namespace labpose::console {

enum class Verbosity { quiet, normal, verbose };

void set_verbosity(Verbosity verbosity);
Verbosity verbosity();

/// True when --headless was given or LABPOSE_HEADLESS is set to a non-empty value other than 0:
/// never try to open a browser or use a display.
bool headless();
void set_headless(bool headless);

/// True when stderr is an interactive terminal and LABPOSE_PLAIN_OUTPUT is not set (progress bars
/// redraw in place there; log files get plain lines).
bool stderr_is_terminal();

/// Sends what would go to stderr to `writer` instead (text exactly as stderr would get it, "\r"
/// redraws included); `live`: status lines redraw in place there (a notebook's output), else
/// progress is written as plain log lines. An empty writer restores stderr. The Python bindings use
/// it; the writer may be called from any thread, one call at a time.
void set_writer(std::function<void(std::string_view text)> writer, bool live);

/// Writes one line to stderr unless quiet; clears and redraws a live progress bar around it.
void write_line(std::string_view line);
/// Replaces the live status line (a progress bar) on a terminal; empty clears it.
void set_status_line(std::string_view line);
/// "error: <message>" and "hint: <hint>" (when there is one) on stderr, even with --quiet, after
/// clearing the status line: how a command reports the labpose::Error that ended it.
void print_error(std::string_view message, std::string_view hint);

template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  if (verbosity() != Verbosity::quiet) write_line(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  // Warnings are shown even with --quiet: they are about the user's data.
  write_line("warning: " + fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  if (verbosity() == Verbosity::verbose)
    write_line(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace labpose::console

// The global flags and the subcommands on CLI11, for main.cpp and the Python bindings.
#include "tools/labpose/cli.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>
#include <opencv2/core/utils/logger.hpp>

#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

#include "core/console.hpp"
#include "core/error.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/option_errors.hpp"

namespace labpose::tools {
namespace {

// "error: <message>\nhint: <hint>\n" (describe_parse_error's text) as a UsageError.
UsageError parse_failure(const std::string& text) {
  std::string message, hint;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (line.rfind("error: ", 0) == 0) {
      message = line.substr(7);
    } else if (line.rfind("hint: ", 0) == 0) {
      hint = line.substr(6);
    } else if (!line.empty()) {
      (hint.empty() ? message : hint) += (message.empty() ? "" : " ") + line;
    }
    start = end + 1;
  }
  return UsageError(message.empty() ? text : message, hint);
}

}  // namespace

int run_command(const std::vector<std::string>& arguments) {
  // OpenCV's own warnings (an image it cannot open, with the raw path) would bypass labpose's
  // messages, which name the file safely and say what to do.
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  CLI::App app(
      "labpose: markerless pose estimation for lab-animal video, with DeepLabCut's project files",
      "labpose");
  app.set_version_flag("--version", "labpose " LABPOSE_VERSION);
  app.failure_message([](const CLI::App* failed, const CLI::Error& error) {
    return describe_parse_error(*failed, error);
  });
  app.footer(
      "Run `labpose <command> --help` for a command's options. Global options may also follow the "
      "command.");
  bool quiet = false, verbose = false, headless = false;
  app.add_flag("-q,--quiet", quiet, "print only warnings and errors");
  app.add_flag("-v,--verbose", verbose, "print more detail");
  app.add_flag("--headless", headless,
               "never open a browser or use a display (also LABPOSE_HEADLESS=1)");
  app.fallthrough();
  app.require_subcommand(0, 1);

  std::map<const CLI::App*, std::function<int()>> actions;
  for (const auto& command : command_table()) {
    CLI::App* sub = app.add_subcommand(command.name, command.summary);
    actions[sub] = command.define(*sub);
  }
  check_numbers(app);

  // CLI11 wants the arguments last to first.
  std::vector<std::string> reversed(arguments.rbegin(), arguments.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::Success& done) {
    // --help and --version: printed as the program prints them.
    std::ostringstream out, err;
    app.exit(done, out, err);
    std::cout << out.str() << std::flush;
    return 0;
  } catch (const CLI::ParseError& error) {
    std::ostringstream out, err;
    app.exit(error, out, err);
    throw parse_failure(err.str());
  }
  if (app.get_subcommands().empty()) {
    std::fputs(app.help().c_str(), stderr);
    return static_cast<int>(ErrorKind::usage);
  }
  console::set_verbosity(quiet     ? console::Verbosity::quiet
                         : verbose ? console::Verbosity::verbose
                                   : console::Verbosity::normal);
  if (headless) console::set_headless(true);
  return actions.at(app.get_subcommands().front())();
}

int run_main(int argc, char** argv) {
  try {
    return run_command(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const Error& error) {
    console::print_error(error.what(), error.hint());
    return error.exit_code();
  } catch (const std::bad_alloc&) {
    console::print_error("out of memory",
                         "close other programs, or use a smaller --batch-size where the command "
                         "has one");
    return 1;
  } catch (const std::exception& error) {
    console::print_error(fmt::format("unexpected failure: {}", error.what()),
                         "this is probably a bug in labpose; please report it with the command "
                         "you ran");
    return 1;
  }
}

}  // namespace labpose::tools

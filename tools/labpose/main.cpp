// labpose: the command-line entry point. Parses global flags and the subcommand, runs it, and maps
// errors to exit codes (0 ok, 1 failure, 2 usage, 3 interrupted but resumable).
#include <fmt/core.h>
#include <CLI/CLI.hpp>
#include <opencv2/core/utils/logger.hpp>

#include <cstdio>
#include <map>

#include "core/console.hpp"
#include "core/error.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/option_errors.hpp"

using labpose::console::print_error;

int main(int argc, char** argv) {
  using labpose::tools::command_table;
  // OpenCV's own warnings (an image it cannot open, with the raw path) would bypass labpose's
  // messages, which name the file safely and say what to do.
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  CLI::App app(
      "labpose: markerless pose estimation for lab-animal video, with DeepLabCut's project files",
      "labpose");
  app.set_version_flag("--version", "labpose " LABPOSE_VERSION);
  app.failure_message([](const CLI::App* failed, const CLI::Error& error) {
    return labpose::tools::describe_parse_error(*failed, error);
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
  labpose::tools::check_numbers(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : static_cast<int>(labpose::ErrorKind::usage);
  }
  if (app.get_subcommands().empty()) {
    std::fputs(app.help().c_str(), stderr);
    return static_cast<int>(labpose::ErrorKind::usage);
  }
  labpose::console::set_verbosity(quiet     ? labpose::console::Verbosity::quiet
                                  : verbose ? labpose::console::Verbosity::verbose
                                            : labpose::console::Verbosity::normal);
  if (headless) labpose::console::set_headless(true);

  try {
    return actions.at(app.get_subcommands().front())();
  } catch (const labpose::Error& error) {
    print_error(error.what(), error.hint());
    return error.exit_code();
  } catch (const std::bad_alloc&) {
    print_error("out of memory",
                "close other programs, or use a smaller --batch-size where the command has one");
    return 1;
  } catch (const std::exception& error) {
    print_error(fmt::format("unexpected failure: {}", error.what()),
                "this is probably a bug in labpose; please report it with the command you ran");
    return 1;
  }
}

// Subcommands of the product that this build does not implement yet: listed in --help, and a
// clear usage error (exit 2) when run.
#include <fmt/core.h>

#include "core/error.hpp"
#include "tools/labpose/command.hpp"

namespace labpose::tools {

Command unavailable_command(std::string name, std::string summary) {
  Command command;
  command.name = name;
  command.summary = summary + " (not yet available in this build)";
  command.define = [name](CLI::App& app) -> std::function<int()> {
    // Accept whatever the finished command will take, so the message below is what the user sees.
    app.fallthrough(false);
    app.allow_extras();
    return [name]() -> int {
      throw UsageError(fmt::format("`labpose {}` is not yet available in this build", name),
                       "this build has: " + available_command_names());
    };
  };
  return command;
}

}  // namespace labpose::tools

// The command line as a library: the global flags, the command table and the mapping of failures
// to exit codes, shared by the `labpose` program (main.cpp) and the Python bindings, which run the
// same commands in-process with the same parser, options structs and messages. Not a shell: no
// globbing, no quoting.
#pragma once

#include <string>
#include <vector>

namespace labpose::tools {

/// Runs `labpose <arguments...>` (arguments without the program's name): parses them, runs the
/// command and returns its exit code. Help and --version print and return 0; no command prints
/// the help on stderr and returns 2. A command line the
/// parser refuses throws UsageError (message and hint as the program prints them); a failing
/// command throws its labpose::Error. Verbosity and headless mode are set from the global flags for
/// the command's run.
int run_command(const std::vector<std::string>& arguments);

/// main(): run_command, with every failure printed as "error: ..." / "hint: ..." on stderr and
/// mapped to its exit code (1 failure, 2 usage, 3 interrupted but resumable).
int run_main(int argc, char** argv);

}  // namespace labpose::tools

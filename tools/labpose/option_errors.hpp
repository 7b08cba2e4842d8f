// The text printed for a command line that CLI11 refused: one short sentence per problem, numeric
// options described by what they accept ("--port must be a whole number from 0 to 65535 (found a
// 300-digit number)"), values from the command line shortened and escaped, and a hint naming the
// subcommand's --help. Not a parser: CLI11 parses; this only words its errors.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace labpose::tools {

/// Makes every numeric option of `app` and its subcommands accept plain decimal numbers only (no
/// hexadecimal or octal, no nan/inf, no sign on unsigned options, nothing beyond 64 bits). Call
/// once after every option is defined.
void check_numbers(CLI::App& app);

/// "error: ...\nhint: ...\n" for `error`, raised while `root` (the whole command line) was parsed.
std::string describe_parse_error(const CLI::App& root, const CLI::Error& error);

}  // namespace labpose::tools

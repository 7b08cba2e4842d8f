// The WIDTHxHEIGHT options (--size of bench, live and demo), parsed one way.
#pragma once

#include <string>
#include <utility>

namespace labpose::tools {

/// "640x480" (or "640X480") -> (640, 480). Throws UsageError naming `option` for anything else or a
/// side outside [minimum, 16384].
std::pair<int, int> parse_size_option(const std::string& text, const std::string& option,
                                      int minimum = 1);

}  // namespace labpose::tools

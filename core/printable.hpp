// Text from a file or a command line made safe to quote in a message: control characters and bytes
// that are not UTF-8 are shown as escapes, so a config line can never move the cursor, clear the
// screen or retitle the terminal through an error. Not a quoting for files or shells.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace labpose {

/// `text` with C0 controls, DEL, C1 controls, Unicode line/paragraph separators and bidi controls
/// written as escapes ("\n", "\t", "\x1b", "\u009b", "\u202e") and every byte that is not part of
/// valid UTF-8 as "\xNN"; other text (backslashes included) unchanged. When the result would pass
/// `max_bytes`, it is cut at a character boundary and "... (N more bytes)" is appended.
std::string printable(std::string_view text, std::size_t max_bytes = std::string_view::npos);

/// Names from a file joined with ", " for a message, each through printable(name, 80); once the
/// list is longer than `stop_after` bytes, the remaining names are left out.
std::string printable_list(const std::vector<std::string>& names,
                           std::size_t stop_after = std::string_view::npos);

}  // namespace labpose

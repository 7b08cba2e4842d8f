// Text from a file as it may be printed in a message: control bytes escaped, so that a stranger's
// file cannot send terminal escape sequences, and very long text cut short. Not a general escaper
// (no quoting rules of any language).
#pragma once

#include <fmt/core.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace labpose::nets {

/// `text` with bytes below 0x20 and 0x7F written as \xNN, cut after `longest` bytes ("... (N
/// bytes)").
inline std::string printable(std::string_view text, std::size_t longest = 120) {
  std::string out;
  for (const char c : text.substr(0, longest)) {
    const auto byte = static_cast<unsigned char>(c);
    out += byte < 0x20 || byte == 0x7F ? fmt::format("\\x{:02x}", byte) : std::string(1, c);
  }
  if (text.size() > longest) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

}  // namespace labpose::nets

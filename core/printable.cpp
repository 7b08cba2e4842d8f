// printable(): one UTF-8 decoding pass that escapes what a terminal would act on.
#include "core/printable.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>

namespace labpose {
namespace {

// The length of the valid UTF-8 sequence at the start of `text` and its code point; 0 when the
// first byte does not start one (stray continuation byte, overlong form, surrogate, cut sequence).
std::size_t utf8_sequence(std::string_view text, char32_t& code_point) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char first = byte(0);
  std::size_t length = 0;
  char32_t minimum = 0;
  if (first < 0x80) {
    code_point = first;
    return 1;
  } else if ((first & 0xe0) == 0xc0) {
    length = 2, minimum = 0x80, code_point = first & 0x1f;
  } else if ((first & 0xf0) == 0xe0) {
    length = 3, minimum = 0x800, code_point = first & 0x0f;
  } else if ((first & 0xf8) == 0xf0) {
    length = 4, minimum = 0x10000, code_point = first & 0x07;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i) & 0x3f);
  }
  if (code_point < minimum || code_point > 0x10ffff ||
      (code_point >= 0xd800 && code_point <= 0xdfff)) {
    return 0;
  }
  return length;
}

// True for the code points a terminal or a text renderer acts on instead of showing.
bool must_escape(char32_t c) {
  return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) ||  // C0, DEL, C1 (0x9b is CSI)
         c == 0x2028 || c == 0x2029 ||                         // line and paragraph separators
         (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);  // bidi overrides
}

std::string escape(char32_t c) {
  switch (c) {
    case '\n':
      return "\\n";
    case '\t':
      return "\\t";
    case '\r':
      return "\\r";
    default:
      return c < 0x80 ? fmt::format("\\x{:02x}", static_cast<std::uint32_t>(c))
                      : fmt::format("\\u{:04x}", static_cast<std::uint32_t>(c));
  }
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  std::size_t at = 0;
  while (at < text.size()) {
    char32_t code_point = 0;
    const std::size_t length = utf8_sequence(text.substr(at), code_point);
    const std::string piece = length == 0
                                  ? fmt::format("\\x{:02x}", static_cast<unsigned char>(text[at]))
                              : must_escape(code_point) ? escape(code_point)
                                                        : std::string(text.substr(at, length));
    if (out.size() + piece.size() > max_bytes) {
      const std::size_t rest = text.size() - at;
      return out + fmt::format("... ({} more byte{})", rest, rest == 1 ? "" : "s");
    }
    out += piece;
    at += length == 0 ? 1 : length;
  }
  return out;
}

std::string printable_list(const std::vector<std::string>& names, std::size_t stop_after) {
  std::string list;
  for (const auto& name : names) {
    if (list.size() > stop_after) break;
    list += (list.empty() ? "" : ", ") + printable(name, 80);
  }
  return list;
}

}  // namespace labpose

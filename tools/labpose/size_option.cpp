// WIDTHxHEIGHT options.
#include "tools/labpose/size_option.hpp"

#include <fmt/core.h>

#include "core/error.hpp"
#include "projects/yaml_text.hpp"

namespace labpose::tools {

std::pair<int, int> parse_size_option(const std::string& text, const std::string& option,
                                      int minimum) {
  constexpr int kLargest = 16384;
  const auto x = text.find_first_of("xX");
  const long long width = projects::yaml_text::parse_int(text.substr(0, x)).value_or(-1);
  const long long height =
      x == std::string::npos ? -1 : projects::yaml_text::parse_int(text.substr(x + 1)).value_or(-1);
  if (width < minimum || height < minimum || width > kLargest || height > kLargest) {
    throw UsageError(fmt::format("{} {} is not WIDTHxHEIGHT with sides from {} to {}", option, text,
                                 minimum, kLargest),
                     fmt::format("e.g. {} 640x480", option));
  }
  return {static_cast<int>(width), static_cast<int>(height)};
}

}  // namespace labpose::tools

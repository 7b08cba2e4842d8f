// labpose::Error implementation.
#include "core/error.hpp"

#include <fmt/core.h>

namespace labpose {

Error::Error(const std::string& message, std::string hint, ErrorKind kind)
    : std::runtime_error(message), hint_(std::move(hint)), kind_(kind) {}

void throw_internal_error(const char* condition, const char* file, int line) {
  throw Error(
      fmt::format("internal error: `{}` does not hold ({}:{})", condition, file, line),
      "this is a bug in labpose, not in your data; please report it with the command you ran");
}

}  // namespace labpose

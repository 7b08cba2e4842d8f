// The environment switches that turn one of labpose's own CPU paths off, to compare it with
// oneDNN's in one run (LABPOSE_WINOGRAD, LABPOSE_MAX_POOL,
// LABPOSE_DILATED_PHASES; LABPOSE_DEPTHWISE has a third value: nets/cpu/depthwise.hpp).
#pragma once

#include <cstdlib>
#include <string>

namespace labpose::nets::cpu {

/// Whether the path that `variable` switches is on: yes, unless the variable is set to 0.
inline bool switched_on(const char* variable) {
  const char* value = std::getenv(variable);
  return value == nullptr || std::string(value) != "0";
}

}  // namespace labpose::nets::cpu

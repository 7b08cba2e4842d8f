// Comparing two safetensors files tensor by tensor, for the weights commands' tests. Not a test.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>

#include "nets/safetensors.hpp"

namespace labpose::tools {

/// Every tensor of `a` equals `b`'s (shape and values), and they have the same names.
inline void expect_same_tensors(const std::filesystem::path& a, const std::filesystem::path& b) {
  const auto left = nets::read_safetensors(a).tensors;
  const auto right = nets::read_safetensors(b).tensors;
  ASSERT_EQ(left.size(), right.size()) << a << " against " << b;
  for (const auto& [name, tensor] : left) {
    const auto other = right.find(name);
    ASSERT_NE(other, right.end()) << name;
    EXPECT_EQ(tensor.shape, other->second.shape) << name;
    EXPECT_EQ(tensor.values, other->second.values) << name;
  }
}

}  // namespace labpose::tools

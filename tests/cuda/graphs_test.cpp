// What a CUDA plan keeps of its captured graphs, without a GPU: the cache of the most recently used
// input addresses, and the switch that turns graphs off. Capturing and launching graphs is checked
// on a GPU (Gpu.* in cuda_gpu_tests).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cuda/graphs.hpp"
#include "cuda/recently_used.hpp"

namespace labpose::cuda {
namespace {

TEST(CudaGraphs, TheMostRecentlyUsedGraphsAreKept) {
  RecentlyUsed<int, std::string> cache(2);
  EXPECT_EQ(cache.find(1), nullptr);
  cache.insert(1, "one");
  cache.insert(2, "two");
  ASSERT_NE(cache.find(1), nullptr) << "1 is now the most recently used";
  cache.insert(3, "three");
  EXPECT_EQ(cache.find(2), nullptr) << "2 was the least recently used";
  const std::string* one = cache.find(1);
  const std::string* three = cache.find(3);
  EXPECT_EQ(one != nullptr ? *one : "", "one");
  EXPECT_EQ(three != nullptr ? *three : "", "three");
  EXPECT_EQ(cache.size(), 2U);
  EXPECT_EQ(cache.evictions(), 1U);
  cache.clear();
  EXPECT_EQ(cache.size(), 0U);
  EXPECT_EQ(cache.find(1), nullptr);
}

TEST(CudaGraphs, OnUnlessTheEnvironmentSaysZero) {
  const char* before = std::getenv("LABPOSE_CUDA_GRAPHS");
  const std::string saved = before != nullptr ? before : "";
  unsetenv("LABPOSE_CUDA_GRAPHS");
  EXPECT_TRUE(cuda_graphs_enabled());
  setenv("LABPOSE_CUDA_GRAPHS", "0", 1);
  EXPECT_FALSE(cuda_graphs_enabled());
  setenv("LABPOSE_CUDA_GRAPHS", "1", 1);
  EXPECT_TRUE(cuda_graphs_enabled());
  if (before != nullptr) {
    setenv("LABPOSE_CUDA_GRAPHS", saved.c_str(), 1);
  } else {
    unsetenv("LABPOSE_CUDA_GRAPHS");
  }
  EXPECT_FALSE(capturing_on_this_thread());
}

}  // namespace
}  // namespace labpose::cuda

// The weights cache: where it is, what a stored entry holds, checksums that catch a damaged file,
// and SHA-256 against known values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "core/error.hpp"
#include "pipeline/weights/sha256.hpp"
#include "pipeline/weights/weight_cache.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::read_text;
using testing::ScopedEnvironment;
using testing::TempDir;
using testing::write_text;

nets::SafetensorsFile small_weights(float value) {
  nets::SafetensorsFile weights;
  weights.tensors["conv1.weight"] = {{2, 3}, {value, 1, 2, 3, 4, 5}};
  weights.metadata["architecture"] = "resnet_50";
  return weights;
}

TEST(WeightCache, TheFolderComesFromTheEnvironment) {
  const ScopedEnvironment own("LABPOSE_WEIGHTS_DIR", "/data/weights");
  EXPECT_EQ(weights_cache_dir(), fs::path("/data/weights"));
  {
    const ScopedEnvironment none("LABPOSE_WEIGHTS_DIR", nullptr);
    const ScopedEnvironment xdg("XDG_CACHE_HOME", "/scratch/cache");
    EXPECT_EQ(weights_cache_dir(), fs::path("/scratch/cache/labpose/weights"));
    const ScopedEnvironment relative("XDG_CACHE_HOME", "cache");  // not absolute: ignored
    const ScopedEnvironment home("HOME", "/home/ada");
    EXPECT_EQ(weights_cache_dir(), fs::path("/home/ada/.cache/labpose/weights"));
    const ScopedEnvironment no_home("HOME", nullptr);
    EXPECT_TRUE(contains(testing::error_text([] { weights_cache_dir(); }), "LABPOSE_WEIGHTS_DIR"));
  }
}

TEST(WeightCache, StoredWeightsAreListedWithTheirChecksumAndSource) {
  TempDir dir;
  const fs::path cache = dir.path() / "a" / "cache";
  EXPECT_TRUE(list_cached_weights(cache).empty());
  EXPECT_FALSE(find_cached_weights(cache, "resnet_50"));
  const CachedWeights stored = store_cached_weights(cache, "resnet_50", small_weights(0), "here");
  EXPECT_EQ(stored.file, cache / "resnet_50-imagenet.safetensors");
  EXPECT_EQ(stored.sha256, sha256_hex(read_text(stored.file)));
  EXPECT_EQ(nets::read_safetensors(stored.file).tensors.at("conv1.weight").values[1], 1.0F);
  store_cached_weights(cache, "mobilenet_v2_0.35", small_weights(0), "there");

  const auto listed = list_cached_weights(cache);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].architecture, "mobilenet_v2_0.35");
  EXPECT_EQ(listed[1].architecture, "resnet_50");
  EXPECT_EQ(listed[1].source, "here");
  EXPECT_EQ(listed[1].sha256, stored.sha256);
  EXPECT_EQ(listed[1].problem, "");
  EXPECT_EQ(listed[1].created.size(), 20u) << listed[1].created;  // 2026-11-24T20:00:00Z

  // Storing again replaces file and note together.
  const CachedWeights again = store_cached_weights(cache, "resnet_50", small_weights(9), "new");
  EXPECT_NE(again.sha256, stored.sha256);
  const auto found = find_cached_weights(cache, "resnet_50");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->source, "new");
  EXPECT_EQ(found->problem, "");
}

TEST(WeightCache, ADamagedFileOrNoteIsReportedNotUsed) {
  TempDir dir;
  const CachedWeights stored = store_cached_weights(dir.path(), "resnet_50", small_weights(0), "x");
  std::string bytes = read_text(stored.file);
  bytes.back() = static_cast<char>(bytes.back() ^ 0x10);
  write_text(stored.file, bytes);
  auto found = find_cached_weights(dir.path(), "resnet_50");
  ASSERT_TRUE(found);
  EXPECT_TRUE(contains(found->problem, "differs from its checksum")) << found->problem;

  write_text(fs::path(stored.file.string() + ".json"), "{\"sha256\": ");
  found = find_cached_weights(dir.path(), "resnet_50");
  EXPECT_TRUE(contains(found->problem, "is damaged")) << found->problem;
  fs::remove(stored.file.string() + ".json");
  found = find_cached_weights(dir.path(), "resnet_50");
  EXPECT_TRUE(contains(found->problem, ".json")) << found->problem;
}

TEST(WeightCache, Sha256MatchesKnownDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Fed in pieces of every size (as a download or a file being written), the same digest.
  Sha256 pieces;
  std::size_t given = 0;
  for (std::size_t size = 0; given < 1000000; ++size) {
    const std::size_t piece = std::min<std::size_t>(size * 37 % 70001, 1000000 - given);
    pieces.update(std::string(piece, 'a'));
    given += piece;
  }
  EXPECT_EQ(pieces.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// On its own thread, behind the caller: pieces queued in place, some synced on the way, others left
// queued until the digest; the same digest. One dropped unfinished ends cleanly.
TEST(WeightCache, BackgroundSha256GivesTheSameDigestInPlace) {
  const std::string million(1000000, 'a');
  BackgroundSha256 behind;
  std::size_t given = 0;
  for (std::size_t size = 0; given < million.size(); ++size) {
    const std::size_t piece = std::min<std::size_t>(size * 37 % 70001, million.size() - given);
    behind.add(std::string_view(million).substr(given, piece));
    given += piece;
    if (size % 3 == 0) behind.sync();
  }
  EXPECT_EQ(behind.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Pieces from two blocks, taken alternately and backwards within one: only pieces that follow
  // each other in memory and in the order given may be joined.
  const std::string first = "abcdefgh", second = "12345678";
  BackgroundSha256 scattered;
  std::string order;
  for (std::size_t i = 0; i < first.size(); i += 2) {
    scattered.add(std::string_view(first).substr(i, 2));
    scattered.add(std::string_view(second).substr(second.size() - 2 - i, 2));
    order += first.substr(i, 2) + second.substr(second.size() - 2 - i, 2);
  }
  EXPECT_EQ(scattered.hex(), sha256_hex(order));
  BackgroundSha256 dropped;
  dropped.add(million);
  dropped.drain();
  BackgroundSha256 unfinished;
  unfinished.add(million);  // the destructor waits for the thread
}

}  // namespace
}  // namespace labpose::pipeline

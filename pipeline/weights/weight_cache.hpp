// The user's cache of converted ImageNet backbones, shared by every project:
// <folder>/<architecture>-imagenet.safetensors with a note beside it (<same>.json: the file's
// SHA-256, where the weights came from, when). The folder is $LABPOSE_WEIGHTS_DIR, else
// $XDG_CACHE_HOME/labpose/weights, else ~/.cache/labpose/weights. Not the download or the
// conversion (weight_sources.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nets/safetensors.hpp"
#include "pipeline/weights/sha256.hpp"  // sha256_hex, which the notes record

namespace labpose::pipeline {

struct CachedWeights {
  std::string architecture;
  std::filesystem::path file;  // the .safetensors
  std::string sha256;          // of the file, as the note records it
  std::string source;          // where the weights came from, in words
  std::string created;         // when they were stored (UTC, ISO 8601)
  std::uintmax_t bytes = 0;
  std::string problem;  // empty: intact; else why the file cannot be used
};

/// The cache folder (not created): $LABPOSE_WEIGHTS_DIR, $XDG_CACHE_HOME/labpose/weights or
/// ~/.cache/labpose/weights.
std::filesystem::path weights_cache_dir();

/// <folder>/<architecture>-imagenet.safetensors.
std::filesystem::path cached_weights_file(const std::filesystem::path& folder,
                                          const std::string& architecture);

/// Stores `weights` as the ImageNet backbone of `architecture` (the folder is created): the file,
/// then its note, each atomically and under a lock, so a reader never sees a note that does not
/// describe its file. Replaces what was there.
CachedWeights store_cached_weights(const std::filesystem::path& folder,
                                   const std::string& architecture,
                                   const nets::SafetensorsView& weights, const std::string& source);
CachedWeights store_cached_weights(const std::filesystem::path& folder,
                                   const std::string& architecture,
                                   const nets::SafetensorsFile& weights, const std::string& source);

/// What the folder holds, by architecture, each checked against its note's SHA-256.
std::vector<CachedWeights> list_cached_weights(const std::filesystem::path& folder);

/// The cached weights of `architecture` (checked), or nothing when there are none. A damaged
/// entry is returned with `problem` set.
std::optional<CachedWeights> find_cached_weights(const std::filesystem::path& folder,
                                                 const std::string& architecture);

}  // namespace labpose::pipeline

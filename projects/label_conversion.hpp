// `labpose convert-labels`: CollectedData CSV -> .h5 or .h5 -> CSV in every labeled-data folder
// (DeepLabCut's convertcsv2h5 and its reverse). A file that would be replaced by different content
// is kept as <file>.bak first; nothing is rewritten when the content is already the same.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "projects/config.hpp"

namespace labpose::projects {

enum class LabelFormat { csv, h5 };

struct ConversionResult {
  std::filesystem::path source;
  std::filesystem::path target;
  enum class Outcome { written, unchanged, failed } outcome = Outcome::written;
  std::optional<std::filesystem::path> backup;  // the previous target, when it differed
  std::string message;                          // why it failed
  std::string hint;
};

/// Converts the labels of every scorer in every labeled-data folder; failures are reported per file
/// (the others are still converted).
std::vector<ConversionResult> convert_labels(const ProjectConfig& config, LabelFormat to);

}  // namespace labpose::projects

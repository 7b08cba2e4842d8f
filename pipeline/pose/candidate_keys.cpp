// Reading the candidate keys (nmsradius, minconfidence, sigma; locref_neighbours) of
// test/pose_cfg.yaml.
#include "pipeline/pose/candidate_keys.hpp"

#include <fmt/core.h>

#include <cmath>
#include <system_error>

#include "core/atomic_file.hpp"
#include "pipeline/pose/pose_cfg_line.hpp"
#include "projects/layout.hpp"
#include "projects/yaml_reader.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

fs::path test_pose_cfg_of(const fs::path& train_dir_file) {
  return projects::pose_cfg_in(projects::test_dir_beside(train_dir_file.parent_path()));
}

namespace {

// The candidate keys of `contents`, the text of test/pose_cfg.yaml `file`.
void read_keys(const std::string& contents, const fs::path& file, CandidateSettings& settings) {
  const YAML::Node root = projects::parse_yaml(contents, file, "pose_cfg.yaml");
  const projects::YamlMapReader reader(file, root);
  // DeepLabCut's template writes 5.0: a whole number, in either spelling.
  if (const auto radius = reader.optional_number("nmsradius", 1.0, 100.0)) {
    if (*radius != std::floor(*radius)) {
      reader.fail(
          "nmsradius", reader.value("nmsradius"),
          fmt::format("nmsradius must be a whole number of score-map cells (found {})", *radius),
          "DeepLabCut's template has nmsradius: 5.0");
    }
    settings.nms_radius = static_cast<int>(*radius);
  }
  settings.min_confidence =
      reader.optional_number("minconfidence", 0.0, 1.0).value_or(settings.min_confidence);
  settings.smoothing_sigma =
      reader.optional_number("sigma", 0.0, 100.0).value_or(settings.smoothing_sigma);
  settings.locref_neighbours =
      reader.optional_bool("locref_neighbours").value_or(settings.locref_neighbours);
}

}  // namespace

void read_candidate_keys(const fs::path& file, CandidateSettings& settings) {
  std::error_code error;
  if (!fs::exists(file, error)) return;
  read_keys(read_file(file), file, settings);
}

namespace {
constexpr const char* kChosenComment = "# chosen by labpose evaluate on the labeled images";
}  // namespace

bool evaluate_chooses_nms_radius(const fs::path& file) {
  std::error_code error;
  if (!fs::exists(file, error)) return true;
  const std::string contents = read_file(file);  // read once: its keys, and the radius's line
  CandidateSettings settings;
  read_keys(contents, file, settings);
  const std::optional<std::string> line = pose_cfg_line(contents, "nmsradius");
  if (!line || line->find(kChosenComment) != std::string::npos) return true;
  // DeepLabCut's template line, `nmsradius: 5.0`, has no comment; a comment of a person's keeps it.
  return settings.nms_radius == CandidateSettings{}.nms_radius &&
         line->find('#') == std::string::npos;
}

void write_chosen_nms_radius(const fs::path& file, int radius) {
  set_pose_cfg_line(file, "nmsradius", fmt::format("{}.0  {}", radius, kChosenComment));
}

}  // namespace labpose::pipeline

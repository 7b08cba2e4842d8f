// An exported model folder's names and its pose_cfg.yaml.
#include "pipeline/export/exported_model.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "projects/layout.hpp"
#include "projects/yaml_reader.hpp"
#include "projects/yaml_text.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

using projects::yaml_text::all_joints_text;
using projects::yaml_text::quote_string;
using projects::yaml_text::quoted_list;
using projects::yaml_text::yaml_float_text;

std::string number_list(const std::vector<float>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + yaml_float_text(std::stod(fmt::format("{}", values[i])));
  return out + "]";
}

std::vector<float> read_pixel_values(const projects::YamlMapReader& reader,
                                     const std::string& key) {
  std::vector<float> values;
  if (reader.is_null(key)) return values;
  const YAML::Node node = reader.value(key);
  if (!node.IsSequence() || node.size() != 3)
    reader.fail(key, node, fmt::format("{} must list three numbers (red, green, blue)", key));
  for (const auto& value : node) {
    values.push_back(static_cast<float>(reader.number_of(key, value, -1e6, 1e6, key + " values")));
  }
  return values;
}

}  // namespace

std::string exported_folder_name(const ExportedModel& model) {
  return fmt::format("DLC_{}_{}_iteration-{}_shuffle-{}", model.task, model.net_type,
                     model.iteration, model.shuffle);
}

fs::path exported_weights_file(const fs::path& folder) {
  return folder / "model.safetensors";
}
fs::path exported_pose_config_file(const fs::path& folder) {
  return projects::pose_cfg_in(folder);
}
fs::path exported_onnx_file(const fs::path& folder) {
  return folder / "model.onnx";
}

std::string exported_pose_config_text(const ExportedModel& m) {
  std::string out =
      "# A labpose model exported by labpose export: model.safetensors holds the weights, this\n"
      "# file what running them needs. Frames go in as 8-bit RGB; mean_pixel and std_pixel are\n"
      "# applied inside the network. Outputs are named with `scorer`.\n";
  const auto line = [&out](const char* key, const std::string& value) {
    out += fmt::format("{}: {}\n", key, value);
  };
  // Sorted by key, as DeepLabCut writes an exported pose_cfg.yaml.
  line("all_joints", all_joints_text(m.bodyparts.size()));
  line("all_joints_names", quoted_list(m.bodyparts));
  line("batch_size", std::to_string(m.batch_size));
  line("date", quote_string(m.date));
  line("global_scale", "1.0");
  line("init_weights", quote_string("model.safetensors"));
  line("iteration", std::to_string(m.iteration));
  line("location_refinement", m.location_refinement ? "true" : "false");
  line("locref_stdev", yaml_float_text(m.locref_stdev));
  line("mean_pixel", number_list(m.mean_pixel));
  line("net_type", quote_string(m.net_type));
  line("num_joints", std::to_string(m.bodyparts.size()));
  line("pcutoff", yaml_float_text(m.pcutoff));
  line("scorer", quote_string(m.scorer));
  line("shuffle", std::to_string(m.shuffle));
  line("snapshot", quote_string(m.snapshot));
  line("snapshot_iterations", std::to_string(m.iterations));
  line("std_pixel", number_list(m.std_pixel));
  line("stride", std::to_string(m.stride));
  line("task", quote_string(m.task));
  line("training_fraction", yaml_float_text(m.training_fraction));
  return out;
}

bool is_exported_model(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error) &&
         fs::is_regular_file(exported_pose_config_file(path), error);
}

ExportedModel read_exported_model(const fs::path& folder) {
  std::error_code error;
  const fs::path config = exported_pose_config_file(folder);
  const std::string hint =
      "make one with labpose export <config.yaml> (it writes "
      "exported-models/DLC_<Task>_<net>_iteration-<K>_shuffle-<S>/)";
  if (!fs::is_directory(folder, error)) {
    throw Error(fmt::format("the model folder {} does not exist", folder.string()), hint);
  }
  if (!fs::is_regular_file(config, error)) {
    throw Error(
        fmt::format("{} is not an exported model: it has no pose_cfg.yaml", folder.string()), hint);
  }
  projects::check_yaml_size(fs::file_size(config, error), config, "pose_cfg.yaml");
  const YAML::Node root = projects::parse_yaml(read_file(config), config, "pose_cfg.yaml");
  if (!root.IsMap()) {
    throw Error(
        fmt::format("{}: pose_cfg.yaml must be a mapping of `key: value` lines", config.string()),
        hint);
  }
  const projects::YamlMapReader reader(config, root);
  ExportedModel m;
  m.net_type = reader.text("net_type", true);
  m.bodyparts = reader.names("all_joints_names");
  if (m.bodyparts.empty()) {
    reader.fail("all_joints_names", reader.value("all_joints_names"),
                "all_joints_names must list the bodyparts");
  }
  if (const auto joints = reader.optional_int("num_joints", 1, 100000);
      joints && static_cast<std::size_t>(*joints) != m.bodyparts.size()) {
    reader.fail("num_joints", reader.value("num_joints"),
                fmt::format("num_joints is {} but all_joints_names lists {} bodyparts ({})",
                            *joints, m.bodyparts.size(), fmt::join(m.bodyparts, ", ")),
                "the file was edited: export the model again");
  }
  m.scorer = reader.text("scorer", true);
  m.snapshot = reader.text("snapshot", false);
  m.iterations = reader.optional_integer("snapshot_iterations", 0).value_or(0);
  m.task = reader.text("task", false);
  m.date = reader.text("date", false);
  m.iteration = reader.optional_int("iteration", 0, 1000000).value_or(0);
  m.shuffle = reader.optional_int("shuffle", 0, 1000000).value_or(1);
  m.training_fraction = reader.optional_number("training_fraction", 0.0, 1.0).value_or(0.95);
  m.stride = reader.optional_int("stride", 1, 64).value_or(8);
  m.locref_stdev = reader.optional_number("locref_stdev", 1e-6, 1e6).value_or(7.2801);
  m.location_refinement = reader.optional_bool("location_refinement").value_or(true);
  m.pcutoff = reader.optional_number("pcutoff", 0.0, 1.0).value_or(0.6);
  m.batch_size = reader.optional_int("batch_size", 1, 4096).value_or(8);
  m.mean_pixel = read_pixel_values(reader, "mean_pixel");
  m.std_pixel = read_pixel_values(reader, "std_pixel");
  if (!fs::is_regular_file(exported_weights_file(folder), error)) {
    throw Error(fmt::format("{} has a pose_cfg.yaml but no model.safetensors", folder.string()),
                "the folder is incomplete: copy it again whole, or export the model again");
  }
  return m;
}

}  // namespace labpose::pipeline

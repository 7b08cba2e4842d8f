// Documentation pickles and metadata.yaml.
#include "pipeline/dataset/training_set_files.hpp"

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "pipeline/assembly/assemble.hpp"
#include "projects/pickle.hpp"
#include "projects/yaml_reader.hpp"
#include "projects/yaml_text.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

struct RegistryEntry {
  std::string name;
  YAML::Node values;  // train_fraction, index, split, engine (as read, or as made)
  double fraction = 0.0;
  long long index = 0;
  long long split = 0;
};

// The entries of an existing metadata.yaml.
std::vector<RegistryEntry> read_registry(const fs::path& file) {
  std::vector<RegistryEntry> entries;
  std::error_code error;
  if (!fs::exists(file, error)) return entries;
  const YAML::Node root = projects::parse_yaml(read_file(file), file, "metadata.yaml");
  const std::string hint =
      "this file is DeepLabCut's registry of shuffles; if it is damaged, move it away and run "
      "create-dataset again (DeepLabCut rebuilds its own entries from the Documentation pickles)";
  if (!root || root.IsNull()) return entries;
  const YAML::Node shuffles = root.IsMap() ? root["shuffles"] : YAML::Node();
  if (!root.IsMap() || (shuffles && !shuffles.IsNull() && !shuffles.IsMap())) {
    throw Error(fmt::format("{}: expected `shuffles:` with one entry per shuffle", file.string()),
                hint);
  }
  if (!shuffles || shuffles.IsNull()) return entries;
  for (const auto& item : shuffles) {
    RegistryEntry entry;
    entry.name = item.first.Scalar();
    entry.values = item.second;
    const auto number = [&](const char* key) -> std::optional<double> {
      if (!entry.values.IsMap() || !entry.values[key] || !entry.values[key].IsScalar())
        return std::nullopt;
      return projects::yaml_text::parse_float(entry.values[key].Scalar());
    };
    const auto fraction = number("train_fraction"), index = number("index");
    if (!fraction || !index) {
      throw Error(fmt::format("{}: the shuffle {} has no train_fraction or index", file.string(),
                              entry.name),
                  hint);
    }
    entry.fraction = *fraction;
    entry.index = static_cast<long long>(*index);
    entry.split = static_cast<long long>(number("split").value_or(0.0));
    entries.push_back(std::move(entry));
  }
  return entries;
}

// A coordinate as DeepLabCut keeps it: float32, then np.round(..., 2) in float32.
float rounded(double value) {
  const float scaled = static_cast<float>(value) * 100.0F;
  return std::nearbyint(scaled) / 100.0F;  // round half to even, as numpy's rint
}

projects::PyValue path_parts(const std::string& path) {
  projects::PyValue::List parts;
  std::stringstream stream(path);
  for (std::string part; std::getline(stream, part, '/');) parts.push_back(part);
  return projects::PyValue::tuple(std::move(parts));
}

// DeepLabCut's TensorFlow single-animal entries: per image that keeps a point, [[j, x, y], ...]
// with x and y truncated as numpy's astype(int) does (toward zero), strictly inside the image.
projects::PyValue::List single_animal_data(const Dataset& dataset,
                                           const std::vector<std::size_t>& indices) {
  using projects::PyValue;
  PyValue::List data;
  for (const std::size_t index : indices) {
    const LabeledImage& image = dataset.images[index];
    PyValue::List joints;
    for (std::size_t j = 0; j < image.x.size(); ++j) {
      if (std::isnan(image.x[j]) || std::isnan(image.y[j])) continue;
      const auto x = static_cast<std::int64_t>(image.x[j]);
      const auto y = static_cast<std::int64_t>(image.y[j]);
      if (x > 0 && x < image.width && y > 0 && y < image.height) {
        joints.push_back(PyValue::List{static_cast<std::int64_t>(j), x, y});
      }
    }
    if (joints.empty()) continue;
    data.push_back(PyValue::dict({{"image", path_parts(image.path)},
                                  {"size", PyValue::tuple({3, image.height, image.width})},
                                  {"joints", std::move(joints)}}));
  }
  return data;
}

projects::PyValue::List multi_animal_data(const Dataset& dataset,
                                          const std::vector<std::size_t>& indices) {
  using projects::PyValue;
  PyValue::List data;
  const std::size_t joints = dataset.bodyparts.size();
  for (const std::size_t index : indices) {
    const LabeledImage& image = dataset.images[index];
    PyValue::Dict by_individual;
    for (std::size_t i = 0; i < dataset.individuals.size(); ++i) {
      std::vector<float> rows;
      for (std::size_t j = 0; j < joints; ++j) {
        const std::size_t slot = i * joints + j;
        if (std::isnan(image.x[slot]) || std::isnan(image.y[slot])) continue;
        const float x = rounded(image.x[slot]), y = rounded(image.y[slot]);
        if (x > 0 && x < static_cast<float>(image.width) && y > 0 &&
            y < static_cast<float>(image.height))
          rows.insert(rows.end(), {static_cast<float>(j), x, y});
      }
      if (rows.empty()) continue;
      const auto count = static_cast<std::int64_t>(rows.size() / 3);
      by_individual.emplace_back(static_cast<std::int64_t>(i),
                                 PyValue::float32_array({count, 3}, rows));
    }
    if (by_individual.empty()) continue;
    data.push_back(
        PyValue::dict({{"image", path_parts(image.path)},
                       {"size", PyValue::int64_array({3}, {3, image.height, image.width})},
                       {"joints", PyValue::dict(std::move(by_individual))}}));
  }
  return data;
}

}  // namespace

std::string multi_animal_training_pickle(const Dataset& dataset,
                                         const std::vector<std::size_t>& indices) {
  return projects::pickle(multi_animal_data(dataset, indices));
}

std::string documentation_pickle(const Dataset& dataset, const std::vector<std::size_t>& train,
                                 const std::vector<std::size_t>& test, double fraction) {
  using projects::PyValue;
  PyValue::List data = dataset.multi_animal() ? multi_animal_data(dataset, train)
                                              : single_animal_data(dataset, train);
  const auto as_list = [](const std::vector<std::size_t>& indices) {
    PyValue::List list;
    for (const std::size_t index : indices) list.emplace_back(static_cast<std::int64_t>(index));
    return list;
  };
  return projects::pickle(PyValue::List{std::move(data), as_list(train), as_list(test), fraction});
}

std::string inference_config_text(std::size_t multi_bodyparts, std::size_t individuals,
                                  bool identity) {
  return fmt::format(
      "# Assembly of animals and tracking (DeepLabCut's inference_cfg.yaml; written by labpose "
      "create-dataset)\n"
      "variant: 0\n"
      "# detections and connections kept for assembly\n"
      "detectionthresholdsquare: {}\npafthreshold: {}\n"
      "distnormalization: 1000\ndistnormalizationLOWER: 0\n"
      "upperbound_factor: 1.25\nlowerbound_factor: 0.5\n"
      "addlikelihoods: 0.15\nmethod: m1\n"
      "# an animal needs this many connections; at most topktoretain animals are kept\n"
      "minimalnumberofconnections: {}\naveragescore: 0.1\ntopktoretain: {}\nwithid: {}\n"
      "# tracking\n"
      "boundingboxslack: 0\niou_threshold: 0.2\nmax_age: 100\nmin_hits: 3\n",
      kProjectDetectionThreshold, kProjectPafThreshold,
      project_min_links(static_cast<int>(multi_bodyparts)), individuals,
      identity ? "true" : "false");
}

std::string updated_shuffle_registry(const fs::path& file,
                                     const std::vector<RegisteredShuffle>& shuffles) {
  std::vector<RegistryEntry> entries = read_registry(file);
  std::erase_if(entries, [&](const RegistryEntry& entry) {
    return std::any_of(shuffles.begin(), shuffles.end(), [&](const RegisteredShuffle& shuffle) {
      return shuffle.name == entry.name;
    });
  });
  long long largest_split = 0;  // the new splits are numbered after the kept ones
  for (const auto& entry : entries) largest_split = std::max(largest_split, entry.split);
  std::map<std::pair<std::vector<std::size_t>, std::vector<std::size_t>>, long long> numbers;
  namespace yaml = projects::yaml_text;
  for (const auto& shuffle : shuffles) {
    const long long next = largest_split + static_cast<long long>(numbers.size()) + 1;
    RegistryEntry entry;
    entry.name = shuffle.name;
    entry.fraction = shuffle.training_fraction;
    entry.index = shuffle.shuffle;
    entry.split = numbers.emplace(std::make_pair(shuffle.train, shuffle.test), next).first->second;
    entry.values["train_fraction"] = yaml::plain_node(yaml::float_text(entry.fraction));
    entry.values["index"] = yaml::plain_node(std::to_string(entry.index));
    entry.values["split"] = yaml::plain_node(std::to_string(entry.split));
    entry.values["engine"] = yaml::string_node(shuffle.engine);
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(), [](const RegistryEntry& a, const RegistryEntry& b) {
    return std::tie(a.fraction, a.index, a.name) < std::tie(b.fraction, b.index, b.name);
  });
  std::string out =
      "# This file is automatically generated - DO NOT EDIT\n"
      "# It contains the information about the shuffles created for the dataset\n"
      "---\nshuffles:";
  if (entries.empty()) return out + " {}\n";
  out += "\n";
  for (const auto& entry : entries) yaml::emit_entry(out, entry.name, entry.values, 2);
  return out;
}

}  // namespace labpose::pipeline

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

}  // namespace

std::string documentation_pickle(const Dataset& dataset, const std::vector<std::size_t>& train,
                                 const std::vector<std::size_t>& test, double fraction) {
  using projects::PyValue;
  PyValue::List data;
  for (const std::size_t index : train) {
    const LabeledImage& image = dataset.images[index];
    PyValue::List joints;
    for (std::size_t j = 0; j < image.x.size(); ++j) {
      if (std::isnan(image.x[j]) || std::isnan(image.y[j])) continue;
      const auto x = static_cast<std::int64_t>(image.x[j]);  // numpy astype(int): toward zero
      const auto y = static_cast<std::int64_t>(image.y[j]);
      if (x > 0 && x < image.width && y > 0 && y < image.height) {
        joints.push_back(PyValue::List{static_cast<std::int64_t>(j), x, y});
      }
    }
    if (joints.empty()) continue;
    PyValue::List parts;
    std::stringstream path(image.path);
    for (std::string part; std::getline(path, part, '/');) parts.push_back(part);
    data.push_back(PyValue::dict({{"image", PyValue::tuple(std::move(parts))},
                                  {"size", PyValue::tuple({3, image.height, image.width})},
                                  {"joints", std::move(joints)}}));
  }
  const auto as_list = [](const std::vector<std::size_t>& indices) {
    PyValue::List list;
    for (const std::size_t index : indices) list.emplace_back(static_cast<std::int64_t>(index));
    return list;
  };
  return projects::pickle(PyValue::List{std::move(data), as_list(train), as_list(test), fraction});
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

// Merging labels, dataset tables and splits.
#include "pipeline/dataset/dataset.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <opencv2/core.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "nets/random.hpp"
#include "pipeline/images/image_files.hpp"
#include "projects/image_header.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

// The slot of `keypoint` in `layout` (Dataset::slots()); throws when the table names a bodypart or
// an individual the layout lacks, or puts a unique bodypart under an animal.
std::size_t slot_of(const projects::KeypointColumns& keypoint, const Dataset& layout,
                    const fs::path& file) {
  const auto& bodyparts = layout.bodyparts;
  const auto found = std::find(bodyparts.begin(), bodyparts.end(), keypoint.bodypart);
  if (found == bodyparts.end()) {
    throw Error(fmt::format("{}: the labels name bodypart \"{}\", which config.yaml does not list",
                            file.string(), printable(keypoint.bodypart, 80)),
                "add it to config.yaml or fix the label file (labpose check-labels shows "
                "all problems)");
  }
  const auto j = static_cast<std::size_t>(found - bodyparts.begin());
  if (!layout.multi_animal()) return j;
  const auto& individuals = layout.individuals;
  const auto who = std::find(individuals.begin(), individuals.end(), keypoint.individual);
  if (who == individuals.end()) {
    throw Error(
        fmt::format("{}: the labels name the individual \"{}\", which config.yaml does not list",
                    file.string(), printable(keypoint.individual, 80)),
        "add it to individuals in config.yaml or fix the label file (labpose check-labels shows "
        "all problems)");
  }
  const bool unique = j >= layout.multi_bodyparts, single = *who == projects::kUniqueIndividual;
  if (unique != single) {
    throw Error(fmt::format("{}: {} {}: {}", file.string(), printable(keypoint.individual, 80),
                            printable(keypoint.bodypart, 80),
                            unique ? "a unique bodypart belongs to the individual \"single\""
                                   : "\"single\" holds the unique bodyparts only"),
                "check uniquebodyparts and multianimalbodyparts in config.yaml");
  }
  return static_cast<std::size_t>(who - individuals.begin()) * bodyparts.size() + j;
}

// Reads the rows of a label table into labeled images, in `layout`'s slots.
std::vector<LabeledImage> images_of(const projects::Table& table, const fs::path& file,
                                    const Dataset& layout) {
  const bool multi = table.column_level_names.size() == 4;
  if (multi != layout.multi_animal()) {
    throw Error(fmt::format("{}: a {}-animal label file in a {}-animal project", file.string(),
                            multi ? "multi" : "single", layout.multi_animal() ? "multi" : "single"),
                "check multianimalproject in config.yaml");
  }
  std::vector<std::pair<std::size_t, std::size_t>> columns(layout.slots(), {SIZE_MAX, SIZE_MAX});
  for (const auto& keypoint : projects::keypoint_columns(table, file))
    columns[slot_of(keypoint, layout, file)] = {keypoint.x, keypoint.y};
  std::vector<LabeledImage> images;
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    const projects::ImageKey key = projects::image_key(table, row);
    LabeledImage image;
    image.path = "labeled-data/" + key.stem + "/" + key.image;
    image.source = file.filename().string();
    for (const auto& [x, y] : columns) {
      image.x.push_back(x == SIZE_MAX ? std::nan("") : table.at(row, x));
      image.y.push_back(y == SIZE_MAX ? std::nan("") : table.at(row, y));
    }
    images.push_back(std::move(image));
  }
  return images;
}

// Fills in the image size; false when the image is missing, unreadable or does not decode (a
// truncated or damaged file would otherwise stop training later).
bool measure(LabeledImage& image, const fs::path& project) {
  const auto size = projects::read_image_size(project / image.path);
  if (!size) return false;
  cv::Mat decoded;
  try {
    decoded = read_image(project / image.path, ChannelOrder::bgr);
  } catch (const Error&) {
    return false;
  }
  if (decoded.cols != size->width || decoded.rows != size->height) return false;
  image.width = size->width;
  image.height = size->height;
  return true;
}

}  // namespace

std::size_t Dataset::slots() const {
  return bodyparts.size() * std::max<std::size_t>(individuals.size(), 1);
}

std::string Dataset::slot_name(std::size_t slot) const {
  if (!multi_animal()) return bodyparts.at(slot);
  return individuals.at(slot / bodyparts.size()) + " " + bodyparts.at(slot % bodyparts.size());
}

Dataset merge_labeled_data(const projects::ProjectConfig& config, MergeReport* report) {
  Dataset dataset;
  dataset.bodyparts = config.keypoint_names();
  const projects::ConfigValues& values = config.values();
  if (values.multi_animal) {
    dataset.individuals = values.individuals;
    if (!values.unique_bodyparts.empty())
      dataset.individuals.emplace_back(projects::kUniqueIndividual);
    dataset.multi_bodyparts = values.multianimal_bodyparts.size();
  }
  const projects::ProjectLayout layout(config.project_dir());
  std::map<std::string, LabeledImage> by_path;
  for (const auto& folder : layout.labeled_folders()) {
    const projects::LabelFiles files = projects::label_files(folder, config.values().scorer);
    if (!files.any_exists()) continue;
    const projects::LoadedLabels loaded = projects::read_labels(files);
    if (report != nullptr) {
      for (const auto& note : loaded.notes) report->notes.push_back(folder.string() + ": " + note);
    }
    for (auto& image : images_of(loaded.table, loaded.source, dataset)) {
      const std::string path = image.path;
      if (by_path.count(path) != 0) {
        throw Error(fmt::format("{}: the image {} is labeled twice", loaded.source.string(), path),
                    "run labpose check-labels and delete the duplicate row");
      }
      by_path.emplace(path, std::move(image));
    }
  }
  for (auto& [key, labeled_image] : by_path) {
    LabeledImage& image = labeled_image;  // a lambda may not capture a structured binding (C++17)
    // How messages name the image: its path and the label file, safe to print.
    const std::string path = fmt::format("{} ({})", printable(key, 300), image.source);
    const auto labeled = [&] {
      for (std::size_t j = 0; j < image.x.size(); ++j) {
        if (!std::isnan(image.x[j]) && !std::isnan(image.y[j])) return true;
      }
      return false;
    };
    if (!labeled()) {
      if (report != nullptr) report->skipped.push_back(fmt::format("{}: no labeled point", path));
      continue;
    }
    if (!measure(image, config.project_dir())) {
      if (report != nullptr)
        report->skipped.push_back(
            fmt::format("{}: the image is missing, not a PNG/JPEG, or damaged", path));
      continue;
    }
    for (std::size_t j = 0; j < image.x.size(); ++j) {
      const double x = image.x[j], y = image.y[j];
      if (std::isnan(x) || std::isnan(y)) {
        image.x[j] = image.y[j] = std::nan("");
        continue;
      }
      if (x < 0 || y < 0 || x >= image.width || y >= image.height) {
        if (report != nullptr) {
          report->dropped.push_back(fmt::format("{}: {} at ({}, {}) is outside the {}x{} image",
                                                path, dataset.slot_name(j), x, y, image.width,
                                                image.height));
        }
        image.x[j] = image.y[j] = std::nan("");
      }
    }
    if (labeled()) {
      dataset.images.push_back(std::move(image));
    } else if (report != nullptr) {
      report->skipped.push_back(fmt::format("{}: every labeled point is outside the image", path));
    }
  }
  return dataset;
}

projects::Table dataset_table(const Dataset& dataset, const std::string& scorer) {
  projects::Table table;
  std::vector<std::size_t> slots;  // the slot of each column pair, in DeepLabCut's column order
  if (!dataset.multi_animal()) {
    table = projects::make_label_table(scorer, dataset.bodyparts);
    for (std::size_t j = 0; j < dataset.bodyparts.size(); ++j) slots.push_back(j);
  } else {
    const std::size_t joints = dataset.bodyparts.size(), multi = dataset.multi_bodyparts;
    const auto first = dataset.bodyparts.begin();
    std::vector<std::string> animals = dataset.individuals;
    if (!animals.empty() && animals.back() == projects::kUniqueIndividual) animals.pop_back();
    table = projects::make_multi_animal_label_table(
        scorer, animals, {first, first + static_cast<std::ptrdiff_t>(multi)},
        {first + static_cast<std::ptrdiff_t>(multi), dataset.bodyparts.end()});
    for (std::size_t i = 0; i < animals.size(); ++i)
      for (std::size_t j = 0; j < multi; ++j) slots.push_back(i * joints + j);
    for (std::size_t j = multi; j < joints; ++j) slots.push_back(animals.size() * joints + j);
  }
  for (const auto& image : dataset.images) {
    const std::string stem =
        image.path.substr(13, image.path.rfind('/') - 13);  // after "labeled-data/"
    const std::size_t row =
        table.add_row({"labeled-data", stem, image.path.substr(image.path.rfind('/') + 1)});
    for (std::size_t k = 0; k < slots.size(); ++k) {
      table.at(row, 2 * k) = image.x[slots[k]];
      table.at(row, 2 * k + 1) = image.y[slots[k]];
    }
  }
  return table;
}

Dataset read_dataset(const fs::path& table_file, const fs::path& project) {
  const projects::Table table = table_file.extension() == ".csv"
                                    ? projects::read_table_csv(table_file)
                                    : projects::read_table_hdf5(table_file);
  Dataset dataset;
  std::vector<std::string> unique;
  for (const auto& keypoint : projects::keypoint_columns(table, table_file)) {
    std::vector<std::string>& names =
        keypoint.individual == projects::kUniqueIndividual ? unique : dataset.bodyparts;
    if (std::find(names.begin(), names.end(), keypoint.bodypart) == names.end())
      names.push_back(keypoint.bodypart);
    if (!keypoint.individual.empty() &&
        std::find(dataset.individuals.begin(), dataset.individuals.end(), keypoint.individual) ==
            dataset.individuals.end())
      dataset.individuals.push_back(keypoint.individual);
  }
  dataset.multi_bodyparts = dataset.multi_animal() ? dataset.bodyparts.size() : 0;
  dataset.bodyparts.insert(dataset.bodyparts.end(), unique.begin(), unique.end());
  dataset.images = images_of(table, table_file, dataset);
  for (auto& image : dataset.images) {
    if (!measure(image, project)) {
      throw Error(fmt::format("{}: the training image {} is missing or unreadable",
                              table_file.string(), image.path),
                  "restore it, or make the training set again with labpose create-dataset");
    }
  }
  return dataset;
}

Split make_split(const Dataset& dataset, double training_fraction, int shuffle,
                 std::uint64_t seed) {
  Split split;
  split.training_fraction = training_fraction;
  split.shuffle = shuffle;
  split.seed = seed;
  std::vector<std::size_t> order(dataset.images.size());
  std::iota(order.begin(), order.end(), 0);
  nets::Random random(seed);
  for (std::size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[random.next() % i]);  // Fisher-Yates
  const auto train_count =
      static_cast<std::size_t>(static_cast<double>(order.size()) * training_fraction);
  for (std::size_t k = 0; k < order.size(); ++k) {
    (k < train_count ? split.train : split.test).push_back(dataset.images[order[k]].path);
  }
  std::sort(split.train.begin(), split.train.end());
  std::sort(split.test.begin(), split.test.end());
  return split;
}

void write_split(const Split& split, const fs::path& file) {
  nlohmann::json json = {{"training_fraction", split.training_fraction},
                         {"shuffle", split.shuffle},
                         {"seed", split.seed},
                         {"train", split.train},
                         {"test", split.test}};
  if (!split.validation.empty()) json["validation"] = split.validation;
  write_file_atomically(file, json.dump(1) + "\n");
}

Split read_split(const fs::path& file) {
  try {
    const nlohmann::json json = nlohmann::json::parse(read_file(file));
    Split split;
    split.training_fraction = json.at("training_fraction").get<double>();
    split.shuffle = json.at("shuffle").get<int>();
    split.seed = json.at("seed").get<std::uint64_t>();
    split.train = json.at("train").get<std::vector<std::string>>();
    split.test = json.at("test").get<std::vector<std::string>>();
    if (json.contains("validation"))
      split.validation = json.at("validation").get<std::vector<std::string>>();
    return split;
  } catch (const nlohmann::json::exception& error) {
    throw Error(fmt::format("{} is not a labpose split file: {}", file.string(), error.what()),
                "make the training set again with labpose create-dataset");
  }
}

std::vector<std::size_t> indices_of(const Dataset& dataset, const std::vector<std::string>& paths,
                                    const fs::path& split_file) {
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < dataset.images.size(); ++i)
    position.emplace(dataset.images[i].path, i);
  std::vector<std::size_t> indices;
  for (const auto& path : paths) {
    const auto found = position.find(path);
    if (found == position.end()) {
      throw Error(fmt::format("{} names the image {}, which is not in the training set",
                              split_file.string(), path),
                  "the labels changed since create-dataset: run labpose create-dataset again");
    }
    indices.push_back(found->second);
  }
  return indices;
}

}  // namespace labpose::pipeline

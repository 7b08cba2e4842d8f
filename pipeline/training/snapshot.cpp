// Snapshot files: listing, selection, writing and reading.
#include "pipeline/training/snapshot.hpp"

#include <fmt/core.h>

#include <fmt/ranges.h>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <utility>

#include "core/error.hpp"
#include "nets/models/models.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {
constexpr const char* kOptimizerPrefix = "optimizer.";
}

std::vector<SnapshotFile> list_snapshots(const fs::path& train_dir) {
  std::vector<SnapshotFile> snapshots;
  std::error_code error;
  static const std::regex pattern(R"(snapshot-(best-)?(\d+)\.safetensors)");
  for (const auto& entry : fs::directory_iterator(train_dir, error)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file(error) || !std::regex_match(name, match, pattern)) continue;
    snapshots.push_back({entry.path(), std::stoll(match[2].str()), match[1].matched});
  }
  std::sort(snapshots.begin(), snapshots.end(), [](const SnapshotFile& a, const SnapshotFile& b) {
    if (a.best != b.best) return !a.best;  // the best one last
    return a.iteration < b.iteration;
  });
  return snapshots;
}

const SnapshotFile& select_snapshot(const std::vector<SnapshotFile>& snapshots, int index,
                                    const fs::path& train_dir) {
  if (snapshots.empty()) {
    throw Error(fmt::format("no snapshots in {}", train_dir.string()),
                "train the network first: labpose train <config.yaml>");
  }
  const auto count = static_cast<int>(snapshots.size());
  const int position = index < 0 ? count + index : index;
  if (position < 0 || position >= count) {
    throw UsageError(fmt::format("snapshot index {} is out of range: {} has {} snapshot{}", index,
                                 train_dir.string(), count, count == 1 ? "" : "s"),
                     "use -1 for the last (the best, when there is one), 0 for the first");
  }
  return snapshots[static_cast<std::size_t>(position)];
}

const SnapshotFile& best_snapshot(const std::vector<SnapshotFile>& snapshots,
                                  const fs::path& train_dir, const std::string& hint) {
  for (auto snapshot = snapshots.rbegin(); snapshot != snapshots.rend(); ++snapshot) {
    if (snapshot->best) return *snapshot;  // the newest, should an older one be left over
  }
  throw Error(fmt::format("{} holds no best snapshot (snapshot-best-<iteration>.safetensors)",
                          train_dir.string()),
              hint);
}

void write_snapshot(const fs::path& file, const nets::Net& net,
                    const std::map<std::string, nets::HostTensor>& optimizer_state,
                    const SnapshotMetadata& metadata) {
  nets::SafetensorsFile contents = nets::net_weights(net);
  for (const auto& [name, tensor] : optimizer_state)
    contents.tensors[kOptimizerPrefix + name] = tensor;
  contents.metadata = snapshot_metadata_entries(metadata);
  nets::write_safetensors(contents, file);
}

std::map<std::string, std::string> snapshot_metadata_entries(const SnapshotMetadata& metadata) {
  std::map<std::string, std::string> entries = metadata.extra;
  entries["format"] = "labpose snapshot 1";
  entries["iteration"] = std::to_string(metadata.iteration);
  entries["architecture"] = metadata.architecture;
  entries["bodyparts"] = nlohmann::json(metadata.bodyparts).dump();
  entries["training_fraction"] = fmt::format("{}", metadata.training_fraction);
  entries["shuffle"] = std::to_string(metadata.shuffle);
  if (metadata.test_rmse) entries["test_rmse"] = fmt::format("{}", *metadata.test_rmse);
  if (metadata.multi_animal) add_multi_animal_entries(*metadata.multi_animal, entries);
  return entries;
}

LoadedSnapshot read_snapshot(const fs::path& file) {
  return snapshot_from(nets::read_safetensors(file), file);
}

LoadedSnapshot snapshot_from(nets::SafetensorsFile contents, const fs::path& file) {
  LoadedSnapshot loaded;
  loaded.file = std::move(contents);
  auto& meta = loaded.file.metadata;
  const auto require = [&](const char* key) -> const std::string& {
    const auto found = meta.find(key);
    if (found == meta.end()) {
      throw Error(fmt::format("{} is not a labpose snapshot (its metadata has no '{}')",
                              file.string(), key),
                  "snapshots are written by labpose train; for ImageNet weights use --weights");
    }
    return found->second;
  };
  require("format");
  try {
    loaded.metadata.iteration = std::stoll(require("iteration"));
    loaded.metadata.architecture = require("architecture");
    loaded.metadata.bodyparts =
        nlohmann::json::parse(require("bodyparts")).get<std::vector<std::string>>();
    loaded.metadata.training_fraction = std::stod(require("training_fraction"));
    loaded.metadata.shuffle = std::stoi(require("shuffle"));
    if (meta.count("test_rmse") != 0) loaded.metadata.test_rmse = std::stod(meta.at("test_rmse"));
    loaded.metadata.multi_animal = multi_animal_model_from(meta, loaded.metadata.bodyparts.size());
  } catch (const std::exception& error) {
    throw Error(fmt::format("{}: damaged snapshot metadata ({})", file.string(), error.what()),
                "use another snapshot, or retrain");
  }
  loaded.metadata.extra = meta;
  for (auto it = loaded.file.tensors.begin(); it != loaded.file.tensors.end();) {
    if (it->first.rfind(kOptimizerPrefix, 0) == 0) {
      loaded.optimizer_state[it->first.substr(std::string_view(kOptimizerPrefix).size())] =
          std::move(it->second);
      it = loaded.file.tensors.erase(it);
    } else {
      ++it;
    }
  }
  return loaded;
}

std::unique_ptr<nets::Net> load_snapshot_network(nets::Backend& backend,
                                                 const LoadedSnapshot& snapshot,
                                                 const fs::path& file) {
  const auto& metadata = snapshot.metadata;
  auto net = nets::build_pose_net(
      backend, {metadata.architecture, static_cast<int>(metadata.bodyparts.size()), true},
      metadata.multi_animal ? metadata.multi_animal->heads() : nets::MultiAnimalHeads{});
  nets::load_weights(*net, snapshot.file, nets::LoadScope::all, file);
  return net;
}

std::string exact_number(double value) {
  return fmt::format("{:a}", value);
}

double exact_number(const std::map<std::string, std::string>& metadata, const std::string& key,
                    double fallback) {
  const auto found = metadata.find(key);
  return found == metadata.end() ? fallback : std::strtod(found->second.c_str(), nullptr);
}

std::string exact_numbers(const std::vector<double>& values) {
  std::string text;
  for (const double value : values) text += (text.empty() ? "" : ",") + exact_number(value);
  return text;
}

std::vector<double> exact_numbers(const std::map<std::string, std::string>& metadata,
                                  const std::string& key) {
  std::vector<double> values;
  const auto found = metadata.find(key);
  if (found == metadata.end()) return values;
  const std::string& text = found->second;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    values.push_back(std::strtod(text.substr(start, comma - start).c_str(), nullptr));
    start = comma + 1;
  }
  return values;
}

}  // namespace labpose::pipeline

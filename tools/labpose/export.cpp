// labpose export <config> [--shuffle K] [--training-fraction F] [--snapshot S|best] [--dest D]
//   [--overwrite] [--onnx [--with-decoding]]
#include <fmt/core.h>

#include <iostream>
#include <tuple>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "pipeline/export/export.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/model_options.hpp"

namespace labpose::tools {

Command export_command() {
  Command command;
  command.name = "export";
  command.summary = "a trained network as a folder that runs without the project";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config, dest;
      ModelOptions model;
      pipeline::ExportOptions exported;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    options->model.add_to(app, "to export");
    app.add_option("--dest", options->dest,
                   "the folder to export into (default: the project's exported-models)");
    app.add_flag("--overwrite", options->exported.overwrite, "replace an earlier export");
    app.add_flag("--onnx", options->exported.onnx,
                 "also write model.onnx (opset 17): uint8 RGB frames in, score maps and location "
                 "refinement out, for ONNX Runtime, OpenVINO, TensorRT or Bonsai");
    app.add_flag("--with-decoding", options->exported.onnx_decoding,
                 "with --onnx: also a `pose` output (N, J, 3: x, y, likelihood) decoded inside the "
                 "graph");
    app.footer(
        "Writes DeepLabCut's exported-models/DLC_<Task>_<net>_iteration-<K>_shuffle-<S>/: "
        "model.safetensors (the snapshot's weights, no optimizer state), pose_cfg.yaml "
        "(bodyparts, network, input normalization, stride, locref_stdev, the scorer and the "
        "snapshot it came from), model.safetensors.int8.json (the int8 calibration, measured on "
        "the shuffle's training images), README.md and, with --onnx, model.onnx. The folder runs "
        "anywhere labpose runs: "
        "labpose analyze --model <folder> <video>, labpose live --model <folder>, and "
        "labpose.Predictor(<folder>) in Python. It appears whole or not at all.");
    return [options]() {
      const projects::ProjectConfig config = load_project_config(options->config);
      pipeline::ExportOptions exported = options->exported;
      if (exported.onnx_decoding && !exported.onnx)
        throw UsageError("--with-decoding is an option of --onnx", "add --onnx");
      exported.producer_version = LABPOSE_VERSION;
      std::tie(exported.shuffle, exported.training_fraction) =
          options->model.chosen_shuffle(config);
      std::tie(exported.snapshot_index, exported.best_snapshot) = options->model.snapshot_choice();
      if (!options->dest.empty()) exported.dest = options->dest;
      const InterruptHandler interrupts;
      const pipeline::ExportResult result = pipeline::export_model(config, exported);
      console::info("exported to {}: {}", result.folder.string(), [&] {
        std::string names;
        for (const auto& file : result.files) names += (names.empty() ? "" : ", ") + file.string();
        return names;
      }());
      std::cout << result.folder.string() << '\n';
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools

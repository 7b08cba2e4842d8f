// labpose check-labels <config>: validates every folder's labels, prints a report, and draws the
// labels onto their frames in labeled-data/<video>_labeled/.
#include <fmt/core.h>

#include <iostream>

#include "core/error.hpp"
#include "labeling/labeled_images.hpp"
#include "projects/label_check.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"

namespace labpose::tools {
namespace {

void print_finding(const projects::Finding& finding) {
  std::cout << "  "
            << (finding.severity == projects::Finding::Severity::error ? "error: " : "warning: ")
            << finding.message << '\n';
  if (!finding.hint.empty()) std::cout << "    hint: " << finding.hint << '\n';
}

}  // namespace

Command check_labels_command() {
  Command command;
  command.name = "check-labels";
  command.summary =
      "check every labeled frame against config.yaml and the images, and draw the labels on them";
  command.define = [](CLI::App& app) -> std::function<int()> {
    auto config_path = std::make_shared<std::string>();
    app.add_option("config", *config_path, "the project's config.yaml")->required();
    app.footer(
        "Checks bodyparts, scorer, images, duplicate rows, coordinates outside the image, CSV vs "
        ".h5, and "
        "videos listed in config.yaml, and draws every labeled frame with its labels into "
        "labeled-data/<video>_labeled/. Exits 1 when it finds errors.");
    return [config_path]() {
      const projects::ProjectConfig config = load_project_config(*config_path);
      const projects::CheckReport report = projects::check_project_labels(config);
      std::cout << "project " << config.project_dir().string() << '\n';
      for (const auto& finding : report.project_findings) print_finding(finding);
      for (const auto& folder : report.folders) {
        if (folder.label_file.empty()) {
          std::cout << fmt::format("labeled-data/{}: {} images, no labels yet\n",
                                   folder.folder.filename().string(), folder.images);
        } else {
          std::cout << fmt::format(
              "labeled-data/{}: {} images, {} rows, {} labeled frames, {} points (from {})\n",
              folder.folder.filename().string(), folder.images, folder.rows, folder.labeled_frames,
              folder.labeled_points, folder.label_file.filename().string());
        }
        for (const auto& finding : folder.findings) print_finding(finding);
      }
      if (report.folders.empty()) std::cout << "no labeled-data folders yet\n";
      // The pictures help find what the errors are about, so they are drawn either way.
      for (const auto& drawn : labeling::draw_labeled_images(config)) {
        std::cout << fmt::format("{}: {} labeled image{} drawn\n", drawn.folder.string(),
                                 drawn.images, drawn.images == 1 ? "" : "s");
        for (const auto& problem : drawn.problems) std::cout << "  warning: " << problem << '\n';
      }
      const std::size_t errors = report.count(projects::Finding::Severity::error);
      const std::size_t warnings = report.count(projects::Finding::Severity::warning);
      std::cout << fmt::format("{} error{}, {} warning{}\n", errors, errors == 1 ? "" : "s",
                               warnings, warnings == 1 ? "" : "s");
      if (errors > 0) {
        throw Error(fmt::format("check-labels found {} error{} in the labels", errors,
                                errors == 1 ? "" : "s"),
                    "each error above names the file and line to fix");
      }
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools

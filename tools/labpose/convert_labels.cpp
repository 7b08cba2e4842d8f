// labpose convert-labels <config> --to h5|csv
#include <fmt/core.h>

#include "core/console.hpp"
#include "core/error.hpp"
#include "projects/label_conversion.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"

namespace labpose::tools {

Command convert_labels_command() {
  Command command;
  command.name = "convert-labels";
  command.summary = "convert every folder's labels between CSV and HDF5 (CollectedData_<scorer>)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config, to;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    app.add_option("--to", options->to,
                   "the format to write: h5 (from the CSV) or csv (from the .h5)")
        ->required()
        ->check(CLI::IsMember({"h5", "csv"}));
    app.footer("A file that would change is first kept as <file>.bak.");
    return [options]() {
      const projects::ProjectConfig config = load_project_config(options->config);
      const auto to = options->to == "h5" ? projects::LabelFormat::h5 : projects::LabelFormat::csv;
      const auto results = projects::convert_labels(config, to);
      std::size_t written = 0, unchanged = 0, failed = 0;
      for (const auto& result : results) {
        switch (result.outcome) {
          case projects::ConversionResult::Outcome::written:
            ++written;
            console::info("wrote {}{}", result.target.string(),
                          result.backup ? fmt::format(" (previous version kept as {})",
                                                      result.backup->filename().string())
                                        : "");
            break;
          case projects::ConversionResult::Outcome::unchanged:
            ++unchanged;
            console::debug("{} already matches {}", result.target.string(),
                           result.source.filename().string());
            break;
          case projects::ConversionResult::Outcome::failed:
            ++failed;
            console::write_line(fmt::format("error: {}", result.message));
            if (!result.hint.empty()) console::write_line(fmt::format("hint: {}", result.hint));
            break;
        }
      }
      console::info("convert-labels: {} written, {} already up to date, {} failed", written,
                    unchanged, failed);
      if (results.empty()) {
        console::info("no {} label files found under {}/labeled-data",
                      options->to == "h5" ? "CSV" : ".h5", config.project_dir().string());
      }
      if (failed > 0)
        throw Error(
            fmt::format("{} label file{} could not be converted", failed, failed == 1 ? "" : "s"));
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools

// Config loading for commands.
#include "tools/labpose/config_loading.hpp"

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"

namespace labpose::tools {

projects::ProjectConfig load_project_config(const std::string& path) {
  projects::ProjectConfig config = projects::ProjectConfig::load(path);
  for (const auto& warning : config.warnings()) console::warn("{}", warning);
  if (const auto& old = config.project_path_corrected()) {
    try {
      config.save();
      // The old path is text from the file: shown escaped, never as terminal control bytes.
      console::info("the project has moved: project_path in {} now says {} (was {})",
                    config.file().string(), printable(config.values().project_path),
                    old->empty() ? "empty" : printable(*old, 300));
    } catch (const Error& error) {
      console::debug("project_path not written back ({}); using {} for this run", error.what(),
                     printable(config.values().project_path));
    }
  }
  return config;
}

}  // namespace labpose::tools

// Config loading for commands.
#include "tools/labpose/config_loading.hpp"

#include "core/console.hpp"
#include "core/error.hpp"

namespace labpose::tools {

projects::ProjectConfig load_project_config(const std::string& path) {
  projects::ProjectConfig config = projects::ProjectConfig::load(path);
  for (const auto& warning : config.warnings()) console::warn("{}", warning);
  if (const auto& old = config.project_path_corrected()) {
    try {
      config.save();
      console::info("the project has moved: project_path in {} now says {} (was {})",
                    config.file().string(), config.values().project_path,
                    old->empty() ? "empty" : *old);
    } catch (const Error& error) {
      console::debug("project_path not written back ({}); using {} for this run", error.what(),
                     config.values().project_path);
    }
  }
  return config;
}

}  // namespace labpose::tools

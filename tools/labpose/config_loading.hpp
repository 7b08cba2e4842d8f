// Loading a project's config.yaml for a command: validation warnings shown once, and project_path
// written back when the project has moved (as DeepLabCut does on every read).
#pragma once

#include <string>

#include "projects/config.hpp"

namespace labpose::tools {

projects::ProjectConfig load_project_config(const std::string& path);

}  // namespace labpose::tools

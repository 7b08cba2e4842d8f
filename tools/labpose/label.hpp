// Starting the labeling server of a project, for `labpose label` and the Python package's
// label_frames: the same merges, messages and warnings for both.
#pragma once

#include <memory>
#include <string>

#include "labeling/server.hpp"

namespace labpose::tools {

/// The labeling server of the project of `config_path`, serving on a background thread: labels of
/// other scorers merged into the project's scorer (each merge said), a warning when it serves
/// beyond this machine. Throws Error for a bad config or a port it cannot have.
std::unique_ptr<labeling::LabelServer> start_label_server(const std::string& config_path,
                                                          const labeling::ServerOptions& options);

/// Opens `url` in the desktop's browser when there is a desktop; says so when there is none (for
/// the commands that serve a page: label, refine-tracks).
void open_browser(const std::string& url);

}  // namespace labpose::tools

// One top-level key of a shuffle's pose_cfg.yaml set the way DeepLabCut's edit_config leaves it
// (`paf_best`, and the `nmsradius` evaluate chooses): its old line, or DeepLabCut's block list
// (`key:` then `- item` lines), removed, and one line `key: value` at the end of the file; every
// other line kept byte for byte, written atomically. And the raw text of a key's line, whose
// comment a YAML reader drops.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace labpose::pipeline {

/// Sets top-level `key` of `file` to `value` (YAML text, with a comment if wanted).
void set_pose_cfg_line(const std::filesystem::path& file, const std::string& key,
                       const std::string& value);

/// The line of top-level `key` in `contents` (a pose_cfg.yaml's text), or nullopt.
std::optional<std::string> pose_cfg_line(const std::string& contents, const std::string& key);

}  // namespace labpose::pipeline

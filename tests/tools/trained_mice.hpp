// The three-mice demo trained for a few steps through the CLI, for the tests of the commands that
// run a multi-animal network (analyze, live): a network that is barely trained, linking every
// pair of candidates so that it gives animals to assemble and track. Not a test itself.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/test_support.hpp"

namespace labpose::testing {
namespace trained_mice_detail {
namespace fs = std::filesystem;

// The only folder in `folder`.
inline fs::path only_folder(const fs::path& folder) {
  fs::path found;
  for (const auto& entry : fs::directory_iterator(folder)) found = entry.path();
  return found;
}

// The three-mice demo with a `frames`-frame video, trained for 4 steps through the CLI, linking
// every pair of candidates (so that a barely trained network gives animals to track); with
// `identity`, as a project with identity: true (a network with an identity head). Returns its
// config.yaml.
inline fs::path trained_mice(const fs::path& dir, int frames, bool identity = false) {
  fs::create_directories(dir);
  const CommandResult made =
      run_labpose("--quiet demo --project-only --animals 3 --labeled-frames 6 --frames " +
                  std::to_string(frames) + " --dir " + shell_quote(dir.string()));
  EXPECT_EQ(made.exit_code, 0) << made.output;
  const fs::path config = made.output.substr(0, made.output.find('\n'));
  const std::string c = shell_quote(config.string());
  if (identity) set_yaml_values(config, {{"identity", "true"}});
  const CommandResult created =
      run_labpose("--quiet create-dataset " + c + " --net mobilenet_v2_0.35 --weights none");
  EXPECT_EQ(created.exit_code, 0) << created.output;
  const fs::path model = only_folder(config.parent_path() / "labpose-models" / "iteration-0");
  set_yaml_values(model / "train" / "pose_cfg.yaml", {{"crop_size", "[64, 64]"},
                                                      {"batch_size", "2"},
                                                      {"display_iters", "2"},
                                                      {"save_iters", "4"},
                                                      {"evaluate_iters", "0"},
                                                      {"max_iters", "4"}});
  const CommandResult trained = run_labpose("--quiet train " + c);
  EXPECT_EQ(trained.exit_code, 0) << trained.output;
  set_yaml_values(model / "test" / "inference_cfg.yaml",
                  {{"pafthreshold", "0.0"}, {"minimalnumberofconnections", "1"}});
  return config;
}

// The demo's video of the project `config`, quoted for the shell.
inline std::string mice_video(const fs::path& config) {
  return shell_quote((config.parent_path() / "videos" / "synthetic_mice.mp4").string());
}

}  // namespace trained_mice_detail

using trained_mice_detail::mice_video;
using trained_mice_detail::trained_mice;

}  // namespace labpose::testing

// create / add-videos: DeepLabCut's layout, all-or-nothing, clear errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "projects/layout.hpp"
#include "projects/project.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::projects {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono;
using testing::TempDir;

std::size_t entries(const fs::path& folder) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(folder), fs::directory_iterator()));
}

CreateProjectOptions options_for(const TempDir& dir, std::vector<VideoInput> videos) {
  CreateProjectOptions options;
  options.task = "openfield";
  options.scorer = "Pranav";
  options.videos = std::move(videos);
  options.working_dir = dir / "work";
  options.date = year{2018} / October / 30;
  fs::create_directories(options.working_dir);
  return options;
}

TEST(CreateProject, MakesDeepLabCutsLayout) {
  const TempDir dir;
  testing::write_text(dir / "m3v1mp4.mp4", "video bytes");
  testing::write_text(dir / "second.avi", "more bytes");
  const auto options =
      options_for(dir, {{dir / "m3v1mp4.mp4", 640, 480}, {dir / "second.avi", 320, 240}});
  const fs::path config_file = create_project(options);
  const fs::path project = dir / "work" / "openfield-Pranav-2018-10-30";
  EXPECT_EQ(config_file, project / "config.yaml");
  for (const char* folder : {"videos", "labeled-data/m3v1mp4", "labeled-data/second",
                             "training-datasets", "dlc-models"}) {
    EXPECT_TRUE(fs::is_directory(project / folder)) << folder;
  }
  EXPECT_TRUE(fs::is_symlink(project / "videos" / "m3v1mp4.mp4"));
  EXPECT_EQ(fs::read_symlink(project / "videos" / "m3v1mp4.mp4"), dir / "m3v1mp4.mp4");
  EXPECT_EQ(entries(dir / "work"), 1u) << "no temp folder stays behind";

  const ProjectConfig config = ProjectConfig::load(config_file);
  EXPECT_FALSE(config.project_path_corrected().has_value());
  EXPECT_EQ(config.values().date, "Oct30");
  ASSERT_EQ(config.values().video_sets.size(), 2u);
  EXPECT_EQ(config.values().video_sets[0].key, (project / "videos" / "m3v1mp4.mp4").string());
  EXPECT_EQ(config.values().video_sets[1].crop, (CropBox{0, 320, 0, 240}));
}

TEST(CreateProject, MakesAMultiAnimalProjectWithItsIndividuals) {
  const TempDir dir;
  testing::write_text(dir / "a.mp4", "video bytes");
  auto options = options_for(dir, {{dir / "a.mp4", 64, 48}});
  options.multi_animal = true;
  options.individuals = {"dam", "pup"};
  const ProjectConfig config = ProjectConfig::load(create_project(options));
  EXPECT_TRUE(config.values().multi_animal);
  EXPECT_EQ(config.values().individuals, options.individuals);
  EXPECT_EQ(config.values().multianimal_bodyparts.size(), 3u);

  // Individuals of a single-animal project, or a bad name: refused before anything is made.
  for (const bool multi_animal : {false, true}) {
    auto refused = options_for(dir, {{dir / "a.mp4", 64, 48}});
    refused.task = "other";
    refused.multi_animal = multi_animal;
    refused.individuals = {"dam", multi_animal ? "single" : "pup"};
    EXPECT_THROW(create_project(refused), UsageError);
    EXPECT_FALSE(fs::exists(dir / "work" / "other-Pranav-2018-10-30"));
  }
  EXPECT_EQ(entries(dir / "work"), 1u);
}

TEST(CreateProject, CopiesVideosWhenAsked) {
  const TempDir dir;
  testing::write_text(dir / "a.mp4", "video bytes");
  auto options = options_for(dir, {{dir / "a.mp4", 64, 48}});
  options.copy_videos = true;
  const fs::path project = create_project(options).parent_path();
  EXPECT_FALSE(fs::is_symlink(project / "videos" / "a.mp4"));
  EXPECT_EQ(testing::read_text(project / "videos" / "a.mp4"), "video bytes");
}

TEST(CreateProject, RefusesAnExistingProjectAndLeavesItUntouched) {
  const TempDir dir;
  testing::write_text(dir / "a.mp4", "x");
  const auto options = options_for(dir, {{dir / "a.mp4", 64, 48}});
  const fs::path config = create_project(options);
  const std::string before = testing::read_text(config);
  try {
    create_project(options);
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("already exists"), std::string::npos);
    EXPECT_NE(error.hint().find("labpose add-videos"), std::string::npos);
  }
  EXPECT_EQ(testing::read_text(config), before);
}

TEST(CreateProject, BadNamesAndDuplicateVideoNamesCreateNothing) {
  const TempDir dir;
  fs::create_directories(dir / "one");
  fs::create_directories(dir / "two");
  testing::write_text(dir / "one" / "a.mp4", "x");
  testing::write_text(dir / "two" / "a.mp4", "y");
  auto options =
      options_for(dir, {{dir / "one" / "a.mp4", 64, 48}, {dir / "two" / "a.mp4", 64, 48}});
  EXPECT_THROW(create_project(options), UsageError);
  options.videos.pop_back();
  for (const char* bad : {"", "a/b", ".hidden", "-dash"}) {
    options.task = bad;
    EXPECT_THROW(create_project(options), UsageError) << bad;
  }
  EXPECT_EQ(entries(dir / "work"), 0u);
}

TEST(CreateProject, FailureHalfwayLeavesNoFolder) {
  const TempDir dir;
  testing::write_text(dir / "a.mp4", "x");
  // The second video does not exist: copying it fails after the first was copied.
  auto options = options_for(dir, {{dir / "a.mp4", 64, 48}, {dir / "gone.mp4", 64, 48}});
  options.copy_videos = true;
  EXPECT_THROW(create_project(options), Error);
  EXPECT_EQ(entries(dir / "work"), 0u);
}

TEST(CreateProject, RemovesTheHalfMadeProjectOfACreateThatWasKilled) {
  const TempDir dir;
  testing::write_text(dir / "a.mp4", "x");
  auto options = options_for(dir, {{dir / "a.mp4", 64, 48}});
  // A create killed (kill -9) while it copied a large video into its temp folder.
  const pid_t child = fork();
  if (child == 0) {
    const fs::path temp = temp_name_for(dir / "work" / "openfield-Pranav-2018-10-30");
    fs::create_directories(temp / "videos");
    testing::write_text(temp / "videos" / "big.mp4", std::string(100000, 'v'));
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(entries(dir / "work"), 1u);
  options.copy_videos = true;
  create_project(options);
  EXPECT_EQ(entries(dir / "work"), 1u) << "only the new project, not the killed one's temp folder";
  EXPECT_TRUE(fs::is_directory(dir / "work" / "openfield-Pranav-2018-10-30"));
}

TEST(AddVideos, AddsLinksFoldersAndConfigEntriesAndSkipsKnownVideos) {
  const TempDir dir;
  testing::write_text(dir / "a.mp4", "x");
  testing::write_text(dir / "b.mp4", "y");
  const fs::path config_file = create_project(options_for(dir, {{dir / "a.mp4", 64, 48}}));
  ProjectConfig config = ProjectConfig::load(config_file);
  const auto result = add_videos(config, {{dir / "a.mp4", 64, 48}, {dir / "b.mp4", 32, 16}}, false);
  EXPECT_EQ(result.added, std::vector<std::string>{"b"});
  EXPECT_EQ(result.skipped, std::vector<std::string>{"a"});
  const ProjectConfig reread = ProjectConfig::load(config_file);
  ASSERT_EQ(reread.values().video_sets.size(), 2u);
  EXPECT_EQ(reread.values().video_sets[1].crop, (CropBox{0, 32, 0, 16}));
  EXPECT_TRUE(fs::is_directory(config_file.parent_path() / "labeled-data" / "b"));
  EXPECT_TRUE(fs::is_symlink(config_file.parent_path() / "videos" / "b.mp4"));
}

TEST(AddVideos, AFailedAddLeavesTheProjectAsItWas) {
  const TempDir dir;
  testing::write_text(dir / "a.mp4", "x");
  testing::write_text(dir / "b.mp4", "y");
  const fs::path config_file = create_project(options_for(dir, {{dir / "a.mp4", 64, 48}}));
  const std::string before = testing::read_text(config_file);
  ProjectConfig config = ProjectConfig::load(config_file);
  // b copies fine, then c fails: b's copy and folder must be removed again.
  EXPECT_THROW(add_videos(config, {{dir / "b.mp4", 64, 48}, {dir / "c.mp4", 64, 48}}, true), Error);
  EXPECT_EQ(testing::read_text(config_file), before);
  EXPECT_FALSE(fs::exists(config_file.parent_path() / "videos" / "b.mp4"));
  EXPECT_FALSE(fs::exists(config_file.parent_path() / "labeled-data" / "b"));
}

TEST(ResolveVideo, FindsMovedProjectsVideosInTheVideosFolder) {
  const TempDir dir;
  testing::write_text(dir / "a.mp4", "x");
  const fs::path config_file = create_project(options_for(dir, {{dir / "a.mp4", 64, 48}}));
  const ProjectConfig config = ProjectConfig::load(config_file);
  EXPECT_EQ(resolve_video(config, "C:\\Users\\lab\\project\\videos\\a.mp4"),
            config.project_dir() / "videos" / "a.mp4");
  EXPECT_FALSE(resolve_video(config, "/elsewhere/none.mp4").has_value());
}

}  // namespace
}  // namespace labpose::projects

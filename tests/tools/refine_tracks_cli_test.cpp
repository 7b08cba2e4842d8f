// labpose refine-tracks on a multi-animal project through the CLI: it finds the video's stitched
// tracks (<video><scorer>_el.h5) as filter does, or takes --tracks; swaps individuals from a frame
// on (several swaps in order), saves in place with the CSV and the first version kept as .orig,
// and refuses unknown individuals, "single" and malformed swaps with the individuals listed. The
// tracks are written by the test (tests/pipeline/animal_tracks.hpp): no network is trained or run.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>

#include "projects/table.hpp"
#include "tests/pipeline/animal_tracks.hpp"
#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::shell_quote;

const std::vector<std::string> kMice = {"individual1", "individual2", "individual3"};

projects::Table demo_tracks() {
  return pipeline::animal_tracks(kMice, {"bodypart1", "bodypart2"}, {"arena"}, 20);
}

// The x of `individual`'s first bodypart in `frame` (its column is 6 individual).
double x_of(const projects::Table& table, std::size_t frame, std::size_t individual) {
  return table.at(frame, 6 * individual);
}

// A demo project with a stand-in snapshot (its name gives the scorer) and the folder the tracks
// go to: the config and the video, quoted, and the path of the _el.h5 filter would read.
struct RefineProject {
  std::string config, video, dest;
  fs::path el;
};

RefineProject make_project(const testing::TempDir& dir) {
  fs::create_directories(dir.path() / "mice");
  const testing::CommandResult made = testing::run_labpose(
      "--quiet demo --project-only --animals 3 --frames 20 --labeled-frames 4 --dir " +
      shell_quote((dir.path() / "mice").string()));
  EXPECT_EQ(made.exit_code, 0) << made.output;
  const fs::path config = made.output.substr(0, made.output.find('\n'));
  RefineProject project{
      shell_quote(config.string()),
      shell_quote((config.parent_path() / "videos" / "synthetic_mice.mp4").string()),
      " --dest " + shell_quote((dir.path() / "out").string()),
      {}};
  const testing::CommandResult created = testing::run_labpose(
      "--quiet create-dataset " + project.config + " --net mobilenet_v2_0.35 --weights none");
  EXPECT_EQ(created.exit_code, 0) << created.output;
  for (const auto& entry :
       fs::recursive_directory_iterator(config.parent_path() / "labpose-models")) {
    if (entry.path().filename() == "train")
      testing::write_text(entry.path() / "snapshot-4.safetensors", "");
  }
  fs::create_directories(dir.path() / "out");
  // Before analyze: the command names the _el.h5 it looked for.
  const testing::CommandResult early =
      testing::run_labpose("refine-tracks " + project.config + " " + project.video + project.dest +
                           " --swap a,b --from 0");
  EXPECT_EQ(early.exit_code, 1) << early.output;
  EXPECT_TRUE(contains(early.output, "analyze it first: labpose analyze")) << early.output;
  const std::size_t end = early.output.find(" does not exist");
  const std::size_t start = early.output.rfind(": ", end);
  project.el = early.output.substr(start + 2, end - start - 2);
  return project;
}

TEST(RefineTracksCli, SwapsFromAFrameOnInPlaceAndKeepsTheOriginal) {
  const testing::TempDir dir;
  const RefineProject project = make_project(dir);
  ASSERT_TRUE(project.el.string().ends_with("_el.h5")) << project.el;
  projects::write_table_hdf5(demo_tracks(), project.el, "tracks");
  const fs::path csv = fs::path(project.el).replace_extension(".csv");
  projects::write_table_csv(demo_tracks(), csv);
  const std::string before = testing::read_text(project.el);

  // Two swaps in order: 1<->2 from frame 5 to the last, then 2<->3 in frames 10 to 12.
  const testing::CommandResult swapped =
      testing::run_labpose("refine-tracks " + project.config + " " + project.video + project.dest +
                           " --swap individual1,individual2 --from 5 --to 19"
                           " --swap individual2,individual3 --from 10 --to 12");
  ASSERT_EQ(swapped.exit_code, 0) << swapped.output;
  EXPECT_TRUE(contains(swapped.output, project.el.string() + "\n")) << swapped.output;
  EXPECT_TRUE(contains(swapped.output, csv.string() + "\n")) << swapped.output;
  EXPECT_TRUE(contains(swapped.output, "swapped individual2 and individual3 in frames 10 to 12"))
      << swapped.output;
  const projects::Table original = demo_tracks();
  const projects::Table refined = projects::read_table_hdf5(project.el, "tracks");
  EXPECT_EQ(x_of(refined, 4, 0), x_of(original, 4, 0));
  EXPECT_EQ(x_of(refined, 5, 0), x_of(original, 5, 1));
  EXPECT_EQ(x_of(refined, 19, 1), x_of(original, 19, 0)) << "--to 19: to the last frame";
  EXPECT_EQ(x_of(refined, 11, 1), x_of(original, 11, 2));
  EXPECT_EQ(x_of(refined, 11, 2), x_of(original, 11, 0));
  EXPECT_EQ(x_of(refined, 13, 2), x_of(original, 13, 2));
  EXPECT_TRUE(projects::same_table(projects::read_table_csv(csv), refined));
  EXPECT_EQ(testing::read_text(fs::path(project.el.string() + ".orig")), before);
  EXPECT_TRUE(fs::exists(fs::path(csv.string() + ".orig")));

  // --tracks names the file; the backup stays the first version.
  const testing::CommandResult again = testing::run_labpose(
      "refine-tracks " + project.config + " " + project.video + " --tracks " +
      shell_quote(project.el.string()) + " --swap individual1,individual2 --from 0");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(testing::read_text(fs::path(project.el.string() + ".orig")), before);
  EXPECT_EQ(x_of(projects::read_table_hdf5(project.el), 0, 1), x_of(original, 0, 0));
}

TEST(RefineTracksCli, RefusesUnknownIndividualsSingleAndMalformedSwaps) {
  const testing::TempDir dir;
  const RefineProject project = make_project(dir);
  const fs::path el = dir / "miceDLC_el.h5";
  projects::write_table_hdf5(demo_tracks(), el, "tracks");
  const std::string head = "refine-tracks " + project.config + " " + project.video + " --tracks " +
                           shell_quote(el.string());
  const std::string before = testing::read_text(el);

  const testing::CommandResult unknown =
      testing::run_labpose(head + " --swap individual1,mouse7 --from 3");
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_TRUE(contains(unknown.output, "has no individual \"mouse7\"")) << unknown.output;
  EXPECT_TRUE(contains(unknown.output,
                       "hint: the individuals of miceDLC_el.h5 are: "
                       "individual1, individual2, individual3"))
      << unknown.output;
  const testing::CommandResult single =
      testing::run_labpose(head + " --swap single,individual1 --from 3");
  EXPECT_EQ(single.exit_code, 1) << single.output;
  EXPECT_TRUE(contains(single.output, "cannot be swapped")) << single.output;
  const testing::CommandResult late =
      testing::run_labpose(head + " --swap individual1,individual2 --from 20");
  EXPECT_TRUE(contains(late.output, "the tracks have frames 0 to 19")) << late.output;
  const testing::CommandResult one = testing::run_labpose(head + " --swap individual1 --from 3");
  EXPECT_EQ(one.exit_code, 2) << one.output;
  EXPECT_TRUE(contains(one.output, "two individuals joined by a comma")) << one.output;
  const testing::CommandResult no_from =
      testing::run_labpose(head + " --swap individual1,individual2");
  EXPECT_EQ(no_from.exit_code, 2) << no_from.output;
  EXPECT_TRUE(contains(no_from.output, "each --swap needs its --from")) << no_from.output;
  const testing::CommandResult folder = testing::run_labpose(
      "refine-tracks " + project.config + " " + shell_quote(dir.path().string()) +
      " --swap individual1,individual2 --from 3");
  EXPECT_EQ(folder.exit_code, 2) << folder.output;
  EXPECT_TRUE(contains(folder.output, "refines the tracks of one video")) << folder.output;
  EXPECT_EQ(testing::read_text(el), before) << "a refused swap changes nothing";
  EXPECT_FALSE(fs::exists(fs::path(el.string() + ".orig")));
}

// Without --swap: the page is served until Ctrl-C (its URL printed as label prints its own); a swap
// made on the page and not saved is said at exit, and the file is left as it was.
TEST(RefineTracksCli, ServesThePageUntilCtrlCAndSaysWhatWasNotSaved) {
  const testing::TempDir dir;
  const RefineProject project = make_project(dir);
  projects::write_table_hdf5(demo_tracks(), project.el, "tracks");
  const std::string before = testing::read_text(project.el);
  // Once the URL is printed, the page's swap request, as the browser sends it.
  const std::string swap_on_page =
      "/usr/bin/python3 -c \"import re, sys, urllib.request as u; "
      "url = re.search(r'http://([^/]+)/\\?token=(\\w+)', open(sys.argv[1]).read()); "
      "r = u.Request('http://' + url[1] + '/api/swap', method='POST', "
      "data=b'{\\\"first\\\": \\\"individual1\\\", \\\"second\\\": \\\"individual3\\\", "
      "\\\"from\\\": 4}', headers={'Content-Type': 'application/json', 'X-Labpose-Token': "
      "url[2]}); "
      "u.urlopen(r)\" \"$out\"";
  const testing::CommandResult served = testing::run_until_then_signal(
      shell_quote(testing::labpose_binary()) + " refine-tracks " + project.config + " " +
          project.video + project.dest + " --no-browser",
      "grep -q '/?token=' \"$out\" && " + swap_on_page, "INT");
  EXPECT_EQ(served.exit_code, 0) << served.output;
  EXPECT_TRUE(contains(served.output, "http://127.0.0.1:")) << served.output;
  EXPECT_TRUE(contains(served.output, "ssh -L")) << served.output;
  EXPECT_TRUE(contains(served.output, "1 swap was not saved")) << served.output;
  EXPECT_EQ(testing::read_text(project.el), before);

  const testing::CommandResult stray = testing::run_labpose(
      "refine-tracks " + project.config + " " + project.video + project.dest + " --from 3");
  EXPECT_EQ(stray.exit_code, 2) << stray.output;
  EXPECT_TRUE(contains(stray.output, "--from and --to go with --swap")) << stray.output;
}

}  // namespace
}  // namespace labpose

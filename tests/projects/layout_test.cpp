// DeepLabCut's names (reference/dlc-format.md §0).
#include <gtest/gtest.h>

#include "projects/layout.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::projects {
namespace {
using namespace std::chrono;

TEST(Layout, ConfigDateHasNoZeroPadding) {
  EXPECT_EQ(config_date(year{2018} / October / 30), "Oct30");
  EXPECT_EQ(config_date(year{2026} / January / 5), "Jan5");
  EXPECT_EQ(config_date(year{2026} / November / 22), "Nov22");
}

TEST(Layout, ProjectFolderNameIsZeroPadded) {
  EXPECT_EQ(project_folder_name("openfield", "Pranav", year{2018} / October / 30),
            "openfield-Pranav-2018-10-30");
  EXPECT_EQ(project_folder_name("reach", "Ann", year{2026} / March / 4), "reach-Ann-2026-03-04");
}

TEST(Layout, TrainingFractionIsTruncatedLikePython) {
  EXPECT_EQ(training_fraction_percent(0.95), 95);
  EXPECT_EQ(training_fraction_percent(0.8), 80);
  EXPECT_EQ(training_fraction_percent(0.29), 28);  // 100 * 0.29 = 28.999999999999996
  EXPECT_EQ(training_fraction_percent(0.57), 56);
  EXPECT_EQ(training_fraction_percent(0.58), 57);
  EXPECT_EQ(training_fraction_percent(1.0), 100);
  EXPECT_EQ(shuffle_folder_name("openfield", "Oct30", 0.95, 1),
            "openfieldOct30-trainset95shuffle1");
}

TEST(Layout, TrainingSetModelAndEvaluationFolders) {
  const ProjectLayout layout("/p/openfield-Pranav-2018-10-30");
  EXPECT_EQ(layout.training_set_dir(0, "openfield", "Oct30"),
            "/p/openfield-Pranav-2018-10-30/training-datasets/iteration-0/"
            "UnaugmentedDataSet_openfieldOct30");
  EXPECT_EQ(layout.model_dir(2, "openfield", "Oct30", 0.95, 1),
            "/p/openfield-Pranav-2018-10-30/labpose-models/iteration-2/"
            "openfieldOct30-trainset95shuffle1");
  EXPECT_EQ(layout.evaluation_dir(0, "openfield", "Oct30", 0.8, 3),
            "/p/openfield-Pranav-2018-10-30/labpose-evaluation-results/iteration-0/"
            "openfieldOct30-trainset80shuffle3");
  EXPECT_EQ(documentation_pickle_name("openfield", 0.95, 1),
            "Documentation_data-openfield_95shuffle1.pickle");
  EXPECT_EQ(split_file_name(0.29, 2), "labpose-split-28shuffle2.json");
  EXPECT_EQ(snapshot_file_name(5000), "snapshot-5000.safetensors");
  EXPECT_EQ(snapshot_file_name(200, true), "snapshot-best-200.safetensors");
}

TEST(Layout, AModelFoldersTrainAndTestFilesAreDeepLabCuts) {
  const std::filesystem::path model =
      "/p/labpose-models/iteration-0/openfieldOct30-trainset95shuffle1";
  EXPECT_EQ(model_train_dir(model), model / "train");
  EXPECT_EQ(model_test_dir(model), model / "test");
  EXPECT_EQ(test_dir_beside(model / "train"), model / "test");
  EXPECT_EQ(pose_cfg_in(model_train_dir(model)), model / "train" / "pose_cfg.yaml");
  EXPECT_EQ(pose_cfg_in(model_test_dir(model)), model / "test" / "pose_cfg.yaml");
  EXPECT_EQ(inference_cfg_in(model_test_dir(model)), model / "test" / "inference_cfg.yaml");
}

TEST(Layout, ScorerAndEvaluationNamesAreDeepLabCutsTensorFlowOnes) {
  EXPECT_EQ(scorer_net_name("resnet_50"), "resnet50");
  EXPECT_EQ(scorer_net_name("resnet_101"), "resnet101");
  EXPECT_EQ(scorer_net_name("mobilenet_v2_1.0"), "mobnet_100");
  EXPECT_EQ(scorer_net_name("mobilenet_v2_0.35"), "mobnet_35");
  EXPECT_EQ(scorer_net_name("mobilenet_v2_0.75"), "mobnet_75");
  EXPECT_EQ(scorer_net_name("efficientnet_lite0"), "effnet_lite0");
  EXPECT_EQ(scorer_net_name("efficientnet-b3"), "effnet_b3");
  const std::string scorer = scorer_name("resnet_50", "openfield", "Oct30", 1, 50000);
  EXPECT_EQ(scorer, "DLC_resnet50_openfieldOct30shuffle1_50000");
  EXPECT_EQ(evaluation_results_name(scorer),
            "DLC_resnet50_openfieldOct30shuffle1_50000-results.csv");
  EXPECT_EQ(keypoint_results_name(scorer),
            "DLC_resnet50_openfieldOct30shuffle1_50000-keypoint-results.csv");
  EXPECT_EQ(evaluation_predictions_name(scorer, "snapshot-50000"),
            "DLC_resnet50_openfieldOct30shuffle1_50000-snapshot-50000.h5");
  EXPECT_EQ(labeled_images_folder_name(scorer, "snapshot-50000"),
            "LabeledImages_DLC_resnet50_openfieldOct30shuffle1_50000_snapshot-50000");
  EXPECT_EQ(evaluation_image_name(true, "m4s1", "img0001.png"), "Training-m4s1-img0001.png");
  EXPECT_EQ(evaluation_image_name(false, "m4s1", "img0001.png"), "Test-m4s1-img0001.png");
  EXPECT_EQ(combined_evaluation_name(), "CombinedEvaluation-results.csv");
  EXPECT_EQ(training_set_metadata_name(), "metadata.yaml");
}

TEST(Layout, FrameImageNamesPadToCeilLog10OfTheFrameCount) {
  EXPECT_EQ(frame_image_name(42, 2330), "img0042.png");
  EXPECT_EQ(frame_image_name(7, 1000), "img007.png");
  EXPECT_EQ(frame_image_name(7, 1001), "img0007.png");
  EXPECT_EQ(frame_image_name(0, 1), "img0.png");
  EXPECT_EQ(frame_image_name(12345, 100000), "img12345.png");
}

TEST(Layout, FrameIndexFromAnImageName) {
  EXPECT_EQ(frame_index_of_image("img0042.png"), 42);
  EXPECT_EQ(frame_index_of_image("img42.png"), 42);
  EXPECT_EQ(frame_index_of_image(frame_image_name(2329, 2330)), 2329);
  EXPECT_EQ(frame_index_of_image("img0.png"), 0);
  for (const char* other : {"img.png", "img12.jpg", "frame0012.png", "img1a.png", "Img1.png",
                            "img-1.png", "img0042.png.tmp"}) {
    EXPECT_FALSE(frame_index_of_image(other)) << other;
  }
}

TEST(Layout, VideoStemsFromAnyOperatingSystem) {
  EXPECT_EQ(video_stem("/data/videos/m3v1mp4.mp4"), "m3v1mp4");
  EXPECT_EQ(video_stem("C:\\Users\\lab\\videos\\mouse.1.avi"), "mouse.1");
  EXPECT_EQ(video_stem("noextension"), "noextension");
  EXPECT_EQ(portable_file_name("C:\\a\\b.avi"), "b.avi");
}

TEST(Layout, VideosInFolderSkipsOurOutputsAndOtherFiles) {
  const testing::TempDir dir;
  for (const char* name :
       {"b.MP4", "a.avi", "a_labeled.mp4", "notes.txt", "x_full.mp4", ".hidden.mp4"}) {
    testing::write_text(dir / name, "x");
  }
  std::filesystem::create_directory(dir / "folder.mp4");
  const auto videos = videos_in_folder(dir.path());
  ASSERT_EQ(videos.size(), 2u);
  EXPECT_EQ(videos[0].filename(), "a.avi");
  EXPECT_EQ(videos[1].filename(), "b.MP4");
}

TEST(Layout, FilteredTracksLabeledVideosAndTrajectoryPlotsAreNamedAsDeepLabCutNamesThem) {
  const std::filesystem::path tracks = "/v/m3v1mp4DLC_mobnet_35_openfieldOct30shuffle1_5000.h5";
  EXPECT_EQ(filtered_tracks_path(tracks),
            "/v/m3v1mp4DLC_mobnet_35_openfieldOct30shuffle1_5000_filtered.h5");
  EXPECT_EQ(labeled_video_path(tracks, 0.6),
            "/v/m3v1mp4DLC_mobnet_35_openfieldOct30shuffle1_5000_p60_labeled.mp4");
  EXPECT_EQ(labeled_video_path(filtered_tracks_path(tracks), 0.29),
            "/v/m3v1mp4DLC_mobnet_35_openfieldOct30shuffle1_5000_filtered_p28_labeled.mp4")
      << "int(100 * pcutoff), truncated as in Python";
  EXPECT_EQ(trajectory_plots_folder("/v", "m3v1mp4"), "/v/plot-poses/m3v1mp4");
  EXPECT_EQ(
      trajectory_plot_names(false),
      (std::vector<std::string>{"trajectory.png", "plot.png", "plot-likelihood.png", "hist.png"}));
  EXPECT_EQ(trajectory_plot_names(true),
            (std::vector<std::string>{"trajectory_filtered.png", "plot_filtered.png",
                                      "plot-likelihood_filtered.png", "hist_filtered.png"}));
  // Several animals: one set per individual, and the colouring in the video's name.
  EXPECT_EQ(
      trajectory_plot_names(true, "mouse1"),
      (std::vector<std::string>{"trajectory_filteredmouse1.png", "plot_filteredmouse1.png",
                                "plot-likelihood_filteredmouse1.png", "hist_filteredmouse1.png"}));
  EXPECT_EQ(trajectory_plot_names(false, "single").front(), "trajectorysingle.png");
  EXPECT_EQ(labeled_video_path("/v/miceDLC_x_el_filtered.h5", 0.6, "_id"),
            "/v/miceDLC_x_el_filtered_id_p60_labeled.mp4");
}

TEST(Layout, CheckedLabelsFoldersAndMachineLabels) {
  const ProjectLayout layout("/p");
  EXPECT_EQ(layout.checked_labels_folder("m1"), "/p/labeled-data/m1_labeled");
  EXPECT_TRUE(is_labeled_output("m1_labeled"));
  EXPECT_TRUE(is_labeled_output("m1DLC_resnet50_aOct30shuffle1_5_p60_labeled"));
  EXPECT_FALSE(is_labeled_output("m1_labeled_copy"));
  EXPECT_FALSE(is_labeled_output("m1"));
  EXPECT_EQ(machine_labels_h5_name(3), "machinelabels-iter3.h5");
  EXPECT_EQ(machine_labels_csv_name(), "machinelabels.csv");
  EXPECT_EQ(machine_labels_iteration("machinelabels-iter3.h5"), 3);
  EXPECT_EQ(machine_labels_iteration(machine_labels_h5_name(12)), 12);
  for (const char* other : {"machinelabels-iter.h5", "machinelabels-iter3.csv",
                            "machinelabels-iterx.h5", "machinelabels.csv", "CollectedData_a.h5"}) {
    EXPECT_EQ(machine_labels_iteration(other), std::nullopt) << other;
  }
}

TEST(Layout, LabeledFoldersSkipLabeledPlotsAndHiddenFolders) {
  const testing::TempDir dir;
  for (const char* name :
       {"labeled-data/m1", "labeled-data/m1_labeled", "labeled-data/.cache", "labeled-data/a"}) {
    std::filesystem::create_directories(dir / name);
  }
  const auto folders = ProjectLayout(dir.path()).labeled_folders();
  ASSERT_EQ(folders.size(), 2u);
  EXPECT_EQ(folders[0].filename(), "a");
  EXPECT_EQ(folders[1].filename(), "m1");
}

}  // namespace
}  // namespace labpose::projects

// Multi-animal training, DeepLabCut's bottom-up recipe: the loss's part-affinity-field term and
// weighted score maps against the formula, the batches' targets (every individual's keypoints,
// PAFs along their limbs, identity maps), predicted animals matched to the labeled ones, and the
// trainer on DeepLabCut's multi-animal example: it learns, its snapshots rebuild the same heads,
// and an interrupted run resumes with the same losses.
#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nets/ref/backend.hpp"
#include "pipeline/dataset/create_dataset.hpp"
#include "pipeline/evaluation/animal_evaluation.hpp"
#include "pipeline/evaluation/animal_matching.hpp"
#include "pipeline/evaluation/errors.hpp"
#include "pipeline/evaluation/evaluate.hpp"
#include "pipeline/evaluation/keypoint_similarity.hpp"
#include "pipeline/pose/candidate_keys.hpp"
#include "pipeline/pose/paf_best.hpp"
#include "pipeline/pose/pose_cfg_line.hpp"
#include "pipeline/training/augment.hpp"
#include "pipeline/training/loader.hpp"
#include "pipeline/training/pose_loss.hpp"
#include "pipeline/training/snapshot.hpp"
#include "pipeline/training/trainer.hpp"
#include "projects/layout.hpp"
#include "projects/table.hpp"
#include "tests/nets/nets_test_support.hpp"
#include "tests/pipeline/multi_animal_fixture.hpp"
#include "tests/pipeline/training_fixture.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;

using nets::testing::download;
using nets::testing::upload;

double cross_entropy(double x, double target) {
  const double p = 1.0 / (1.0 + std::exp(-x));
  return target == 1.0 ? -std::log(p) : -std::log(1.0 - p);
}

// One image, one bodypart on a 1x2 grid, one limb: every term's mean divides by its non-zero
// weights (TensorFlow's SUM_BY_NONZERO_WEIGHTS), the PAF term is 0.1 x squared error.
TEST(MultiAnimalLoss, PafTermAndWeightedScoreMapsFollowTheFormula) {
  nets::ref::RefBackend backend;
  const nets::Shape score_shape{1, 1, 1, 2}, locref_shape{1, 2, 1, 2}, paf_shape{1, 2, 1, 2};
  PoseLoss loss(backend, score_shape, locref_shape, true, 0.05, MultiAnimalLoss{paf_shape, 0.1});
  TrainingBatch batch;
  batch.size = 1;
  batch.score = {1.0F, 0.0F};
  batch.score_weights = {1.0F, 0.0F};  // the second cell does not count
  batch.locref = {0.5F, 0.0F, -0.5F, 0.0F};
  batch.locref_weights = {1.0F, 1.0F, 1.0F, 1.0F};
  batch.pafs = {1.0F, 0.0F, 0.0F, 0.0F};
  batch.paf_weights = {1.0F, 1.0F, 1.0F, 0.0F};  // three weighted values
  const std::vector<float> score = {2.0F, -7.0F}, locref = {0.0F, 0.0F, 0.0F, 3.0F},
                           pafs = {0.5F, 1.0F, -2.0F, 9.0F};
  const nets::Tensor score_t = upload(backend, score_shape, score);
  const nets::Tensor locref_t = upload(backend, locref_shape, locref);
  const nets::Tensor paf_t = upload(backend, paf_shape, pafs);
  std::vector<nets::Backend::HostCopy> copies;
  loss.add_target_copies(batch, copies);
  backend.copy_all_from_host(copies);
  const double value = loss.forward_backward(score_t, locref_t, batch, std::nullopt, &paf_t);

  const double score_term = cross_entropy(2.0, 1.0) / 1.0;
  // Huber (delta 1): 0.5 * 0.25, 0, 0.5 * 0.25, 3 - 0.5; four weighted cells.
  const double locref_term = 0.05 * (0.125 + 0.0 + 0.125 + 2.5) / 4.0;
  const double paf_term = 0.1 * (0.25 + 1.0 + 4.0) / 3.0;
  EXPECT_NEAR(value, score_term + locref_term + paf_term, 1e-6);
  const auto paf_gradient = download(backend, loss.paf_gradient());
  EXPECT_NEAR(paf_gradient[0], 0.1 * 2 * -0.5 / 3.0, 1e-7);
  EXPECT_NEAR(paf_gradient[1], 0.1 * 2 * 1.0 / 3.0, 1e-7);
  EXPECT_NEAR(paf_gradient[2], 0.1 * 2 * -2.0 / 3.0, 1e-7);
  EXPECT_EQ(paf_gradient[3], 0.0F) << "unweighted";
  const auto score_gradient = download(backend, loss.score_gradient());
  EXPECT_NEAR(score_gradient[0], 1.0 / (1.0 + std::exp(-2.0)) - 1.0, 1e-6);
  EXPECT_EQ(score_gradient[1], 0.0F) << "a cell of weight 0 learns nothing";

  // A rank of a data-parallel job divides by the ranks' mean counts instead.
  const double shared =
      loss.forward_backward(score_t, locref_t, batch, LossCounts{2.0, 8.0, 6.0}, &paf_t);
  EXPECT_NEAR(shared, score_term / 2 + locref_term / 2 + paf_term / 2, 1e-6);
}

// The example project (3 individuals with identity, 3 multi-animal and 2 unique bodyparts) as
// a training set with a tiny recipe.
struct MultiAnimalFixture {
  testing::TempDir dir;
  fs::path project, train_dir;
  PoseConfig pose;

  MultiAnimalFixture() {
    const auto config = projects::ProjectConfig::load(multi_animal_example_project(dir.path()));
    project = config.project_dir();
    CreateDatasetOptions options;
    options.net_type = "mobilenet_v2_0.35";
    const CreatedDataset made =
        create_training_dataset(config, merge_labeled_data(config, nullptr), options);
    train_dir = made.shuffles.at(0).model_dir / "train";
    pose = read_pose_config(train_dir / "pose_cfg.yaml");
    use_tiny_recipe(pose, 96);
    write_pose_config(pose, train_dir / "pose_cfg.yaml");
  }
  TrainOptions options() const { return cpu_training_options(project, train_dir); }
};

TEST(MultiAnimalBatches, HoldEveryIndividualsTargets) {
  const MultiAnimalFixture fixture;
  const Dataset dataset = read_dataset(fixture.project / fixture.pose.dataset, fixture.project);
  std::vector<std::size_t> train(dataset.images.size());
  std::iota(train.begin(), train.end(), 0);
  PoseConfig pose = fixture.pose;  // crops that hold a whole mouse of the example
  pose.crop_width = pose.crop_height = 256;
  BatchGeometry geometry;
  geometry.batch = 4;
  geometry.height = geometry.width = 256;
  geometry.output_height = geometry.output_width = 32;
  geometry.joints = 5;
  BatchLoader loader(dataset, train, fixture.project, pose, geometry, 0, 1);
  auto batch = loader.next();
  const std::size_t plane = 32 * 32;
  EXPECT_EQ(batch->score.size(), 4 * (5 + 3) * plane) << "5 bodyparts, then 3 identities";
  EXPECT_EQ(batch->score_weights.size(), batch->score.size());
  EXPECT_EQ(batch->locref.size(), 4 * 10 * plane);
  EXPECT_EQ(batch->pafs.size(), 4 * 6 * plane) << "3 limbs";
  EXPECT_EQ(batch->paf_weights.size(), batch->pafs.size());
  // DeepLabCut's default weights: every value counts.
  EXPECT_TRUE(std::all_of(batch->score_weights.begin(), batch->score_weights.end(),
                          [](float w) { return w == 1.0F; }));
  // Where an identity channel is 1 a bodypart's score map is too (the example's animals are
  // spread so wide that a crop centred on one may hold none of its keypoints).
  float positives = 0.0F;
  for (std::size_t k = 0; k < 4; ++k) {
    const float* score = batch->score.data() + k * 8 * plane;
    const float* identity = score + 5 * plane;
    positives += std::accumulate(score, score + 3 * plane, 0.0F);
    for (std::size_t cell = 0; cell < plane; ++cell) {
      const bool any_identity =
          identity[cell] + identity[plane + cell] + identity[2 * plane + cell] > 0;
      const bool any_part = score[cell] + score[plane + cell] + score[2 * plane + cell] > 0;
      EXPECT_EQ(any_identity, any_part) << "crop " << k << " cell " << cell;
    }
  }
  EXPECT_GT(positives, 0.0F);
  EXPECT_TRUE(std::any_of(batch->pafs.begin(), batch->pafs.end(), [](float v) {
    return std::abs(v) > 0.5F;
  })) << "limbs between an animal's visible bodyparts";
  loader.recycle(std::move(batch));
}

TEST(MultiAnimalBatches, FlipsSwapBodypartsWithinEachIndividual) {
  PoseConfig config;
  config.bodyparts = {"left", "right", "tail", "corner"};
  config.unique_bodyparts = {"corner"};
  config.individuals = {"a", "b"};
  config.symmetric_pairs = {{"left", "right"}};
  EXPECT_EQ(flip_partners(config), (std::vector<int>{1, 0, 2, 3, 5, 4, 6, 7, 9, 8, 10, 11}))
      << "a, b, then single";
}

// Two labeled animals, two predicted ones in the other order and a third, spurious one: each
// labeled animal gets the nearest, its keypoints land in its slots, the unique bodypart in
// single's.
TEST(AnimalMatching, EachLabeledAnimalTakesTheNearestPredictedOne) {
  Dataset dataset;
  dataset.bodyparts = {"snout", "tail", "corner"};
  dataset.multi_bodyparts = 2;
  dataset.individuals = {"m1", "m2", "single"};
  LabeledImage image;
  const double nan = std::nan("");
  image.x = {10, 20, nan, 100, 110, nan, nan, nan, 300};
  image.y = {10, 10, nan, 100, 100, nan, nan, nan, 300};
  dataset.images = {image};
  const auto animal = [](double x, double y) {
    Assembly a;
    a.keypoints = {{x, y, 0.9}, {x + 10, y, 0.8}};
    return a;
  };
  Assemblies predicted;
  predicted.animals = {animal(101, 102), animal(500, 500), animal(12, 9)};
  Assembly single;
  single.keypoints = {{303, 304, 0.7}};
  predicted.single = single;
  EXPECT_EQ(match_animals(dataset, image, predicted.animals), (std::vector<int>{2, 0}));
  const auto slots = matched_slots(dataset, image, predicted);
  ASSERT_EQ(slots.size(), 9u);
  EXPECT_EQ(slots[0].x, 12);
  EXPECT_EQ(slots[4].x, 111);
  EXPECT_EQ(slots[8].x, 303);
  EXPECT_TRUE(std::isnan(slots[2].x)) << "m1 has no corner";
  const ErrorSummary errors = summarize_errors(dataset, {0}, {slots}, 0.6);
  EXPECT_EQ(errors.points, 5u);
  EXPECT_NEAR(errors.per_bodypart[0], (std::hypot(2, 1) + std::hypot(1, 2)) / 2, 1e-12);
  EXPECT_NEAR(errors.per_bodypart[2], 5.0, 1e-12);

  // A labeled animal no predicted animal shares a bodypart with is left unmatched, unmeasured.
  predicted.animals = {animal(101, 102)};
  predicted.single.reset();
  const auto fewer = matched_slots(dataset, image, predicted);
  EXPECT_TRUE(std::isnan(fewer[0].x));
  EXPECT_EQ(fewer[3].x, 101);
  EXPECT_EQ(summarize_errors(dataset, {0}, {fewer}, 0.6).points, 2u);
}

TEST(MultiAnimalTrainer, LearnsAndResumesWithTheSameLossesAndHeads) {
  const MultiAnimalFixture fixture;
  std::vector<double> straight;
  TrainOptions options = fixture.options();
  options.on_step = [&](std::int64_t, double loss) { straight.push_back(loss); };
  const TrainResult whole = train(options);
  EXPECT_EQ(whole.stop, TrainResult::Stop::finished);
  ASSERT_EQ(straight.size(), 6u);
  for (const double loss : straight) EXPECT_TRUE(std::isfinite(loss));
  const LoadedSnapshot loaded = read_snapshot(fixture.train_dir / "snapshot-6.safetensors");
  ASSERT_TRUE(loaded.metadata.multi_animal.has_value());
  EXPECT_EQ(*loaded.metadata.multi_animal, *multi_animal_model(fixture.pose));
  EXPECT_EQ(loaded.metadata.multi_animal->heads().identity, 3);
  EXPECT_EQ(loaded.metadata.multi_animal->heads().limbs, 3);
  nets::ref::RefBackend backend;
  const auto net = load_snapshot_network(backend, loaded, fixture.train_dir / "snapshot-6");
  const auto shapes = net->output_shapes(nets::Shape{1, 3, 64, 64});
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0].c(), 8) << "5 bodyparts and 3 identities";
  EXPECT_EQ(shapes[2].c(), 6) << "x and y of 3 limbs";

  // Interrupted after iteration 4, then resumed: the same losses.
  clear_training_outputs(fixture.train_dir);
  EXPECT_EQ(interrupted_and_resumed_losses(fixture.options(), 4), straight);
}

TEST(MultiAnimalTrainer, TheLossFallsOverAFewDozenSteps) {
  MultiAnimalFixture fixture;
  fixture.pose.max_iters = 40;
  fixture.pose.evaluate_iters = 0;
  fixture.pose.save_iters = 40;
  fixture.pose.batch_size = 4;
  fixture.pose.multi_step = {{0.01, 1000}};
  write_pose_config(fixture.pose, fixture.train_dir / "pose_cfg.yaml");
  std::vector<double> losses;
  TrainOptions options = fixture.options();
  options.on_step = [&](std::int64_t, double loss) { losses.push_back(loss); };
  train(options);
  ASSERT_EQ(losses.size(), 40u);
  const double first = std::accumulate(losses.begin(), losses.begin() + 5, 0.0) / 5;
  const double last = std::accumulate(losses.end() - 5, losses.end(), 0.0) / 5;
  EXPECT_LT(last, 0.5 * first) << "first five " << first << ", last five " << last;
}

// DeepLabCut's evaluate_assembly on a hand-made case, its numbers from the same formulas in numpy:
// two labeled animals in one image, a third in another; the better predicted animal (higher
// affinity) is near the first, the other further from the second, and the third is missed.
TEST(AssemblyScores, FollowDeepLabCutsEvaluateAssembly) {
  const auto points = [](std::vector<std::pair<double, double>> xy) {
    std::vector<KeypointPrediction> keypoints;
    for (const auto& [x, y] : xy) keypoints.push_back({x, y, 1.0});
    return keypoints;
  };
  const auto labeled_one = points({{0, 0}, {40, 0}, {40, 30}});
  const auto labeled_two = points({{100, 100}, {140, 100}, {140, 130}});
  const auto near_one = points({{1, 0}, {40, 2}, {43, 30}});
  const auto off_two = points({{110, 100}, {140, 110}, {140, 130}});
  EXPECT_NEAR(object_keypoint_similarity(near_one, labeled_one, kOksSigma), 0.9124804031334574,
              1e-12);
  EXPECT_NEAR(object_keypoint_similarity(off_two, labeled_two, kOksSigma), 0.4227138130626758,
              1e-12);
  const double nan = std::nan("");
  EXPECT_TRUE(std::isnan(
      object_keypoint_similarity(points({{1, 0}, {nan, nan}, {nan, nan}}), labeled_one, kOksSigma)))
      << "one keypoint in common is not enough";

  const auto animal = [](std::vector<KeypointPrediction> keypoints, double affinity) {
    Assembly a;
    a.keypoints = std::move(keypoints);
    a.links = 1;
    a.affinity_sum = affinity;
    return a;
  };
  ImageAnimals first;
  first.predicted = {animal(off_two, 0.5), animal(near_one, 0.9)};  // matched best-first
  first.labeled = {labeled_two, labeled_one};
  ImageAnimals second;
  second.labeled = {labeled_one};
  const AssemblyScores scores = score_assemblies({first, second});
  EXPECT_EQ(scores.matches, 2u);
  EXPECT_EQ(scores.misses, 1u);
  EXPECT_NEAR(scores.mean_average_precision, 0.3029702970297029, 1e-12);
  EXPECT_NEAR(scores.mean_average_recall, 0.3, 1e-12);
  EXPECT_TRUE(std::isnan(score_assemblies({}).mean_average_precision));
}

// evaluate on a multi-animal shuffle: errors after matching, mAP and mAR, DeepLabCut's layouts.
TEST(MultiAnimalEvaluate, WritesMatchedErrorsAndKeypointMetrics) {
  const MultiAnimalFixture fixture;
  train(fixture.options());
  const auto config = projects::ProjectConfig::load(fixture.project / "config.yaml");
  EvaluateOptions options;
  options.plot = true;
  const auto results = evaluate_network(config, options);
  ASSERT_FALSE(results.empty());
  const SnapshotEvaluation& result = results.back();
  ASSERT_TRUE(result.assembly.has_value());
  // Every labeled animal of the test images is either matched by a predicted one or missed.
  const Dataset dataset = read_dataset(fixture.project / fixture.pose.dataset, fixture.project);
  const Split split = read_split(fixture.project / fixture.pose.split);
  std::size_t labeled = 0;
  for (const std::size_t index : indices_of(dataset, split.test, "split")) {
    for (std::size_t i = 0; i < 3; ++i) {
      bool any = false;
      for (std::size_t j = 0; j < 3; ++j)
        any = any || !std::isnan(dataset.images[index].x[i * 5 + j]);
      labeled += any ? 1 : 0;
    }
  }
  const AssemblyScores& test = result.assembly->test;
  EXPECT_EQ(test.misses + std::min<std::size_t>(test.matches, labeled), labeled);
  if (test.matches + test.misses > 0) {
    EXPECT_GE(test.mean_average_precision, 0.0);
    EXPECT_LE(test.mean_average_recall, 1.0);
  }
  const auto written = [&](const std::string& name) {
    return std::any_of(result.written.begin(), result.written.end(),
                       [&](const fs::path& file) { return file.filename() == name; });
  };
  EXPECT_TRUE(written(projects::assembly_results_name(result.scorer)));
  const std::string csv =
      testing::read_text(result.folder / projects::assembly_results_name(result.scorer));
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            ",Training iterations:,%Training dataset,Shuffle number,train mAP,train mAR,test mAP,"
            "test mAR");
  const projects::Table table = projects::read_table_hdf5(
      result.folder / projects::evaluation_predictions_name(result.scorer, result.snapshot));
  EXPECT_EQ(table.column_level_names,
            (std::vector<std::string>{"scorer", "individuals", "bodyparts", "coords"}));
  EXPECT_EQ(table.column_count(), (3u * 3u + 2u) * 3u) << "3 animals x 3 bodyparts, 2 unique";
  EXPECT_EQ(table.columns[3],
            (std::vector<std::string>{result.scorer, "individual1", "bodypart2", "x"}));
  // The graph chosen is stored where assembly reads it, and keeps the rest of the file.
  const fs::path test_config = fixture.train_dir.parent_path() / "test" / "pose_cfg.yaml";
  EXPECT_TRUE(written("pose_cfg.yaml"));
  EXPECT_EQ(result.assembly->graph_edges, fixture.pose.paf_graph.size());
  ASSERT_FALSE(result.assembly->paf_best.empty());
  EXPECT_EQ(read_paf_best(test_config, static_cast<int>(fixture.pose.paf_graph.size())),
            result.assembly->paf_best);
  EXPECT_THAT(testing::read_text(test_config), ::testing::HasSubstr("partaffinityfield_graph: "));
  // No nmsradius in the file: evaluate chose one on the labeled images and wrote it, saying so.
  EXPECT_TRUE(result.assembly->nms_radius_chosen);
  EXPECT_THAT(testing::read_text(test_config),
              ::testing::HasSubstr(fmt::format("\nnmsradius: {}.0  # chosen by labpose evaluate",
                                               result.assembly->nms_radius)));
  EXPECT_TRUE(evaluate_chooses_nms_radius(test_config)) << "its own choice is open to the next";
  const PurityScores& purity = result.assembly->train_purity;
  if (purity.images > 0) {  // a few steps of training: maybe nothing assembled (purity NaN)
    EXPECT_GE(purity.miss, 0.0);
    EXPECT_LE(purity.miss, 1.0);
    EXPECT_TRUE(std::isnan(purity.purity) || (purity.purity > 0.0 && purity.purity <= 1.0));
  }
}

// A radius a person set is kept: evaluate assembles from it alone and leaves its line alone.
TEST(MultiAnimalEvaluate, KeepsAnNmsRadiusAPersonSet) {
  const MultiAnimalFixture fixture;
  train(fixture.options());
  const fs::path test_config = fixture.train_dir.parent_path() / "test" / "pose_cfg.yaml";
  testing::write_text(test_config, testing::read_text(test_config) + "nmsradius: 4\n");
  const auto config = projects::ProjectConfig::load(fixture.project / "config.yaml");
  const auto results = evaluate_network(config, EvaluateOptions{});
  ASSERT_FALSE(results.empty());
  ASSERT_TRUE(results.back().assembly.has_value());
  EXPECT_EQ(results.back().assembly->nms_radius, 4);
  EXPECT_FALSE(results.back().assembly->nms_radius_chosen);
  EXPECT_THAT(testing::read_text(test_config), ::testing::HasSubstr("\nnmsradius: 4\n"));
}

// DeepLabCut's 5 stays unless another radius scores strictly higher; NaN (nothing assembled) never
// wins over a score.
TEST(NmsRadiusChoice, DeepLabCutsFiveUnlessAnotherScoresHigher) {
  const double nan = std::nan("");
  EXPECT_EQ(best_radius({3, 4, 5, 6}, {0.9, 0.95, 0.95, 0.9}), 2U) << "a tie keeps 5";
  EXPECT_EQ(best_radius({3, 4, 5, 6}, {0.98, 0.95, 0.97, 0.98}), 0U) << "the first of the best";
  EXPECT_EQ(best_radius({3, 4, 5, 6}, {0.5, nan, nan, 0.4}), 0U);
  EXPECT_EQ(best_radius({3, 4, 5, 6}, {nan, nan, nan, nan}), 2U);
  EXPECT_EQ(best_radius({4}, {nan}), 0U);
  EXPECT_EQ(best_radius({3, 4}, {0.7, 0.8}), 1U) << "without 5, the best";
}

// Which nmsradius lines evaluate may replace: none, DeepLabCut's template line, or its own.
TEST(NmsRadiusChoice, OpenUnlessAPersonSetTheRadius) {
  testing::TempDir dir;
  const fs::path file = dir.path() / "pose_cfg.yaml";
  EXPECT_TRUE(evaluate_chooses_nms_radius(file)) << "no file";
  const auto open = [&](const std::string& text) {
    testing::write_text(file, "stride: 8.0\n" + text);
    return evaluate_chooses_nms_radius(file);
  };
  EXPECT_TRUE(open(""));
  EXPECT_TRUE(open("nmsradius: 5.0\n")) << "DeepLabCut's template";
  EXPECT_TRUE(open("nmsradius: 5\n"));
  EXPECT_FALSE(open("nmsradius: 4.0\n"));
  EXPECT_FALSE(open("nmsradius: 5  # mine\n"));
  testing::write_text(file, "stride: 8.0\nnmsradius: 5.0\nsigma: 1\n");
  write_chosen_nms_radius(file, 3);
  EXPECT_EQ(testing::read_text(file),
            "stride: 8.0\nsigma: 1\nnmsradius: 3.0  # chosen by labpose evaluate on the labeled "
            "images\n");
  CandidateSettings settings;
  read_candidate_keys(file, settings);
  EXPECT_EQ(settings.nms_radius, 3) << "analysis reads the radius chosen";
  EXPECT_TRUE(evaluate_chooses_nms_radius(file));
  EXPECT_EQ(pose_cfg_line(testing::read_text(file), "sigma"), "sigma: 1");
  EXPECT_FALSE(pose_cfg_line(testing::read_text(file), "minconfidence").has_value());
}

TEST(PafBest, ReplacesDeepLabCutsBlockListAndRefusesBadEdges) {
  testing::TempDir dir;
  const fs::path file = dir.path() / "pose_cfg.yaml";
  testing::write_text(file, "net_type: resnet_50\npaf_best:\n- 0\n- 2\nstride: 8\n");
  EXPECT_EQ(read_paf_best(file, 3), (std::vector<int>{0, 2}));
  write_paf_best(file, {1, 0});
  EXPECT_EQ(testing::read_text(file), "net_type: resnet_50\nstride: 8\npaf_best: [1, 0]\n");
  EXPECT_EQ(read_paf_best(file, 3), (std::vector<int>{1, 0}));
  testing::write_text(file, "stride: 8\n");
  EXPECT_FALSE(read_paf_best(file, 3).has_value());
  testing::write_text(file, "stride: 8\npaf_best: [0, 3]\n");
  try {
    read_paf_best(file, 3);
    FAIL() << "edge 3 of a 3-edge graph was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("pose_cfg.yaml:2:"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("an edge of the 3-edge graph"));
  }
  testing::write_text(file, "paf_best: [1, 1]\n");
  EXPECT_THROW(read_paf_best(file, 3), Error);
}

TEST(CandidateKeys, DeepLabCutsKeysOfTestPoseCfgSetTheCandidates) {
  testing::TempDir dir;
  const fs::path file = dir.path() / "test" / "pose_cfg.yaml";
  EXPECT_EQ(test_pose_cfg_of(dir.path() / "train" / "snapshot-100.safetensors"), file);
  CandidateSettings settings;
  read_candidate_keys(file, settings);  // no file: DeepLabCut's template values
  EXPECT_EQ(settings.nms_radius, 5);
  EXPECT_EQ(settings.min_confidence, 0.01);
  EXPECT_EQ(settings.smoothing_sigma, 1.0);
  fs::create_directories(file.parent_path());
  testing::write_text(file, "stride: 8.0\nnmsradius: 3.0\nminconfidence: 0.05\nsigma: 0\n");
  read_candidate_keys(file, settings);
  EXPECT_EQ(settings.nms_radius, 3);
  EXPECT_EQ(settings.min_confidence, 0.05);
  EXPECT_EQ(settings.smoothing_sigma, 0.0);
  testing::write_text(file, "stride: 8.0\nnmsradius: 4\n");  // the others as they were
  read_candidate_keys(file, settings);
  EXPECT_EQ(settings.nms_radius, 4);
  EXPECT_EQ(settings.min_confidence, 0.05);
  EXPECT_TRUE(settings.locref_neighbours) << "labpose's default";
  testing::write_text(file, "stride: 8.0\nlocref_neighbours: false\n");
  read_candidate_keys(file, settings);
  EXPECT_FALSE(settings.locref_neighbours) << "DeepLabCut's decoding";
  for (const char* bad : {"nmsradius: 2.5\n", "nmsradius: 0\n", "minconfidence: 1.5\n",
                          "sigma: -1\n", "minconfidence: high\n", "locref_neighbours: 3\n"}) {
    SCOPED_TRACE(bad);
    testing::write_text(file, std::string("stride: 8.0\n") + bad);
    try {
      read_candidate_keys(file, settings);
      FAIL() << "accepted";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("pose_cfg.yaml:2:"));
    }
  }
}

}  // namespace
}  // namespace labpose::pipeline

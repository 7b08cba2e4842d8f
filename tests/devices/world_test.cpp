// The job a process belongs to: the launcher's variables, a process alone, and MPI under mpirun
// with two ranks (label `mpi`): every collective checked by labpose-mpi-check on each rank, over
// shared memory and over TCP alone (the transport between machines), a missing or wrong plugin,
// and a rank that stops answering.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "core/error.hpp"
#include "devices/devices.hpp"
#include "devices/world.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::devices {
namespace {

using testing::contains;

Launch launch_with(const std::map<std::string, std::string>& variables) {
  return launch_from_environment([&](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  });
}

TEST(World, WithoutALauncherAProcessIsAlone) {
  const Launch launch = launch_with({{"SLURM_NTASKS", "8"}, {"SLURM_PROCID", "0"}});
  EXPECT_EQ(launch.launcher, "");  // a batch script's own shell, not an srun step
  EXPECT_EQ(launch.size, 1);
  EXPECT_EQ(launch.rank, 0);
}

TEST(World, ReadsOpenMpiSlurmAndPmiVariables) {
  Launch launch = launch_with({{"OMPI_COMM_WORLD_SIZE", "4"},
                               {"OMPI_COMM_WORLD_RANK", "3"},
                               {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                               {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  EXPECT_EQ(launch.launcher, "mpirun (Open MPI)");
  EXPECT_EQ(launch.size, 4);
  EXPECT_EQ(launch.rank, 3);
  EXPECT_EQ(launch.local_rank, 1);
  EXPECT_EQ(launch.local_size, 2);
  launch =
      launch_with({{"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}});
  EXPECT_EQ(launch.launcher, "srun (Slurm)");
  EXPECT_EQ(launch.size, 8);
  EXPECT_EQ(launch.rank, 5);
  EXPECT_EQ(launch.local_rank, 1);
  EXPECT_EQ(launch.local_size, 0) << "srun does not say";
  launch = launch_with({{"PMI_SIZE", "2"}, {"PMI_RANK", "1"}});
  EXPECT_EQ(launch.launcher, "mpiexec (PMI)");
  EXPECT_EQ(launch.rank, 1);
  EXPECT_EQ(launch.local_rank, 0);
}

TEST(World, NonsenseInTheLauncherVariablesIsNamed) {
  std::string error = testing::error_text([] {
    launch_with({{"OMPI_COMM_WORLD_SIZE", "two"}, {"OMPI_COMM_WORLD_RANK", "0"}});
  });
  EXPECT_TRUE(contains(error, "OMPI_COMM_WORLD_SIZE=two")) << error;
  error = testing::error_text([] {
    launch_with({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "2"}});
  });
  EXPECT_TRUE(contains(error, "OMPI_COMM_WORLD_RANK=2, which is not a number from 0 to 1"))
      << error;
}

TEST(World, EachLaunchedRankOnTheCpuGetsItsShareOfTheCores) {
  Launch launch;
  launch.launcher = "mpirun (Open MPI)";
  launch.size = 2;
  launch.rank = 1;
  launch.local_rank = 1;
  launch.local_size = 2;
  EXPECT_EQ(launched_device("cpu", launch), "cpu");
  if (compiled_backends().size() == 2 || !device_problem("cuda").empty()) {
    EXPECT_EQ(launched_device("auto", launch), "cpu") << "no GPU here";
  }
  const std::string error = testing::error_text([&] { launched_device("cuda:1", launch); });
  EXPECT_TRUE(contains(error, "--device cuda:1 gives the same GPU to the 2 ranks on this machine"))
      << error;
  EXPECT_EQ(launched_device("cpu", Launch{}), "cpu");
  EXPECT_EQ(launched_device("cuda:1", Launch{}), "cuda:1") << "a process alone keeps its choice";
}

TEST(World, AProcessStartedAloneNeedsNoMpi) {
  if (launch_from_environment().size > 1) GTEST_SKIP() << "this test runs under a launcher";
  const auto world = join_world();
  EXPECT_EQ(world->size(), 1);
  EXPECT_EQ(world->rank(), 0);
  std::vector<float> values{1.5F, -2.0F};
  world->start_mean(values.data(), values.size())->wait();
  EXPECT_EQ(values, (std::vector<float>{1.5F, -2.0F}));
}

// ---- two ranks under mpirun --------------------------------------------------------------------

// labpose-mpi-check on two ranks; `options` for mpirun, `mode` for the program.
std::string mpirun(const std::string& options, const std::string& mode = "") {
  // As root, Open MPI wants to be told that this is meant.
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
         testing::shell_quote(LABPOSE_MPIEXEC) + " -np 2 --oversubscribe " + options + " " +
         testing::shell_quote(LABPOSE_MPI_CHECK) + " " + mode + " 2>&1";
}

TEST(WorldMpi, EveryCollectiveGivesWhatTheRanksInputsMust) {
  const auto result = testing::run(mpirun(""));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "rank 0 of 2 ok")) << result.output;
  EXPECT_TRUE(contains(result.output, "rank 1 of 2 ok")) << result.output;
  EXPECT_TRUE(contains(result.output, "2 on this machine")) << result.output;
}

TEST(WorldMpi, OverTcpAloneAsBetweenMachines) {
  const auto result = testing::run(mpirun("--mca btl tcp,self"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "rank 0 of 2 ok")) << result.output;
  EXPECT_TRUE(contains(result.output, "rank 1 of 2 ok")) << result.output;
}

TEST(WorldMpi, ARankThatHangsEndsTheJobWithAnErrorNamingIt) {
  // Rank 1 hangs outside MPI for good (its MPI thread still answers); rank 0's first exchange gives
  // up after its time limit, calls the roll, names rank 1, and the launcher ends rank 1. The
  // limit only bounds the wait: a loaded machine changes nothing.
  const auto result = testing::run("LABPOSE_RANK_TIMEOUT=2 " + mpirun("", "hang"));
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "rank 0 of 2: the broadcast from rank 1: MPI_Ibcast waited 2 s: rank 1 has "
                       "not reached it (hung outside MPI)"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "LABPOSE_RANK_TIMEOUT")) << result.output;
}

TEST(WorldMpi, WithoutTheMpiLibraryALaunchedRankSaysWhatToInstall) {
  // A rank as Open MPI's mpirun would start it, with no plugin to load.
  const std::string rank = "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 ";
  auto result = testing::run(rank + "LABPOSE_MPI_PLUGIN=/nonexistent/liblabpose-mpi.so " +
                             testing::shell_quote(LABPOSE_MPI_CHECK) + " 2>&1");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "mpirun (Open MPI) started labpose as rank 0 of 2, but this "
                       "labpose has no MPI plugin (looked for "
                       "/nonexistent/liblabpose-mpi.so)"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "apt-get install openmpi-bin libopenmpi-dev"))
      << result.output;
  // A plugin that cannot be loaded (as when libmpi.so is missing): the loader's reason.
  const testing::TempDir dir;
  const auto broken = dir.path() / "liblabpose-mpi.so";
  testing::write_text(broken, "not a library");
  result = testing::run(rank + "LABPOSE_MPI_PLUGIN=" + testing::shell_quote(broken.string()) + " " +
                        testing::shell_quote(LABPOSE_MPI_CHECK) + " 2>&1");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "but MPI cannot be loaded")) << result.output;
  EXPECT_TRUE(contains(result.output, "apt-get install")) << result.output;
}

}  // namespace
}  // namespace labpose::devices

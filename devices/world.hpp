// The job a process belongs to: alone, or one rank of a job that mpirun, mpiexec or srun started.
// The launcher is read from the environment; MPI is loaded from the plugin (liblabpose-mpi.so)
// only then, so that labpose runs without any MPI installed. Not process start-up: labpose never
// starts ranks itself.
#pragma once

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nets/backend.hpp"
#include "nets/communicator.hpp"

namespace labpose::devices {

/// What the launcher told this process.
struct Launch {
  std::string launcher;  // "mpirun (Open MPI)", "srun (Slurm)", "mpiexec (PMI)"; "" when none
  int size = 1;
  int rank = 0;
  int local_rank = 0;  // among the ranks on this machine
  int local_size = 0;  // the ranks on this machine; 0: the launcher does not say (srun)
};

/// The launcher's variables: Open MPI's OMPI_COMM_WORLD_SIZE/RANK/LOCAL_RANK/LOCAL_SIZE, Slurm's
/// SLURM_STEP_NUM_TASKS/SLURM_PROCID/SLURM_LOCALID (srun sets them, a batch script alone does
/// not), or PMI_SIZE/PMI_RANK/MPI_LOCALRANKID/MPI_LOCALNRANKS (MPICH's mpiexec). `variable` looks
/// one up (tests pass their own). Throws a labpose::Error naming a variable that is not a sensible
/// number.
Launch launch_from_environment(const std::function<const char*(const char*)>& variable =
                                   [](const char* name) { return std::getenv(name); });

/// Where the MPI plugin is looked for: $LABPOSE_MPI_PLUGIN, beside the executable, in
/// ../lib/labpose of it, and in the build folder it was built in.
std::vector<std::string> mpi_plugin_candidates();

/// This process's communicator: nets::SingleProcess without a launcher or in a job of one rank,
/// else MPI from the plugin. A collective waits at most $LABPOSE_RANK_TIMEOUT seconds (default
/// 600) for the other ranks. Throws a labpose::Error saying what to install when launched but MPI
/// cannot be loaded. MPI starts once per process: call this once.
std::unique_ptr<nets::Communicator> join_world();

/// The device of a launched rank for --device `device`, from its local rank alone (no exchange;
/// what analyze's independent ranks use): auto and cuda give each rank the GPU of its local rank
/// (auto: the CPU when the machine has none); CPU ranks share the machine's cores evenly (the
/// OpenMP threads are set, and the count logged). Errors: more ranks on a machine than GPUs, one
/// named GPU for several ranks. A process alone gets `device` as it is.
std::string launched_device(const std::string& device, const Launch& launch);

/// launched_device() for a rank of `world`, which also refuses ranks that disagree on having a
/// GPU. Collective: every rank calls it.
std::string rank_device(const std::string& device, nets::Communicator& world);

/// The communicator for gradients in `backend`'s memory over the ranks of `world`: null for host
/// memory (`world` itself does), else the device kind's (NCCL for cuda). Collective. Throws a
/// labpose::Error when the kind has none.
std::unique_ptr<nets::Communicator> device_communicator(nets::Communicator& world,
                                                        nets::Backend& backend);

}  // namespace labpose::devices

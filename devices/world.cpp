// The launcher's variables, the plugin's search and loading, and the choice of communicator.
#include "devices/world.hpp"

#include <dlfcn.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <thread>
#include <vector>

#include "core/console.hpp"
#include "core/error.hpp"
#include "devices/mpi_api.hpp"
#include "devices/mpi_communicator.hpp"
#include "devices/registry.hpp"

namespace labpose::devices {
namespace fs = std::filesystem;

namespace {

constexpr double kDefaultRankTimeout = 600.0;

const char* const kInstallHint =
    "install Open MPI (as root: apt-get install openmpi-bin libopenmpi-dev) and build labpose "
    "again (tools/build.sh), or start labpose without mpirun/srun to train in one process";

// The variable's value as an integer in [low, high], or `fallback` when it is not set.
int integer_variable(const std::function<const char*(const char*)>& variable, const char* name,
                     int low, int high, int fallback) {
  const char* text = variable(name);
  if (text == nullptr) return fallback;
  const std::string_view value(text);
  int number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() || number < low || number > high) {
    throw Error(fmt::format("the launcher set {}={}, which is not a number from {} to {}", name,
                            value, low, high),
                "start labpose with mpirun or srun as usual; do not set these variables by hand");
  }
  return number;
}

// One launcher's names for the four numbers.
struct LauncherVariables {
  const char* launcher;
  const char* size;
  const char* rank;
  const char* local_rank;
  const char* local_size;  // null: the launcher does not say
};

constexpr LauncherVariables kLaunchers[] = {
    {"mpirun (Open MPI)", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
     "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"srun (Slurm)", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_LOCALID", nullptr},
    {"mpiexec (PMI)", "PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
};

fs::path executable_folder() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : self.parent_path();
}

double rank_timeout() {
  const char* text = std::getenv("LABPOSE_RANK_TIMEOUT");
  if (text == nullptr) return kDefaultRankTimeout;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(seconds > 0)) {
    throw UsageError(fmt::format("LABPOSE_RANK_TIMEOUT={} is not a number of seconds", text),
                     "set it to how long a rank may wait for the others, e.g. 600");
  }
  return seconds;
}

// The plugin's table from the first candidate that exists; a labpose::Error saying why not.
const LabposeMpiApi& load_plugin(const Launch& launch) {
  const std::vector<std::string> candidates = mpi_plugin_candidates();
  for (const std::string& candidate : candidates) {
    if (!fs::exists(candidate)) continue;
    // Never closed: MPI stays loaded until the process ends. RTLD_GLOBAL lets MPI's own
    // components (dlopened by libmpi) see its symbols.
    void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (library == nullptr) {
      throw Error(fmt::format("{} started labpose as rank {} of {}, but MPI cannot be loaded: {}",
                              launch.launcher, launch.rank, launch.size, dlerror()),
                  kInstallHint);
    }
    const auto get = reinterpret_cast<LabposeMpiApiFunction>(
        dlsym(library, kLabposeMpiApiSymbol));  // NOLINT: dlsym's only way
    const LabposeMpiApi* api = get != nullptr ? get() : nullptr;
    if (api == nullptr || api->version != kLabposeMpiApiVersion) {
      throw Error(fmt::format("{} is not the MPI plugin of this labpose build", candidate),
                  "build labpose again (tools/build.sh), or unset LABPOSE_MPI_PLUGIN");
    }
    return *api;
  }
  throw Error(fmt::format("{} started labpose as rank {} of {}, but this labpose has no MPI "
                          "plugin (looked for {})",
                          launch.launcher, launch.rank, launch.size, fmt::join(candidates, ", ")),
              kInstallHint);
}

// Which GPU kinds' devices this machine has (the first compiled numbered kind), by count.
int usable_gpus(std::string& kind_name) {
  for (const nets::BackendKind& kind : backend_kinds()) {
    if (!kind.compiled || !kind.numbered) continue;
    std::string why_none;
    kind_name = kind.name;
    return static_cast<int>(kind.candidates(why_none).size());
  }
  return 0;
}

// The CPU threads of a CPU rank: the machine's cores shared by its ranks (when the launcher says
// how many there are), and no more than the cores the launcher bound the rank to.
void share_cores(const Launch& launch) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int bound = std::max(1, omp_get_num_procs());
  const int threads =
      launch.local_size > 0 ? std::clamp(cores / launch.local_size, 1, bound) : bound;
  omp_set_num_threads(threads);
  console::info("rank {} of {}: {} CPU thread{} ({} cores on this machine for {} ranks)",
                launch.rank, launch.size, threads, threads == 1 ? "" : "s", cores,
                launch.local_size > 0 ? std::to_string(launch.local_size) : "its");
}

}  // namespace

Launch launch_from_environment(const std::function<const char*(const char*)>& variable) {
  constexpr int kMaxRanks = 1 << 20;
  for (const LauncherVariables& names : kLaunchers) {
    if (variable(names.size) == nullptr) continue;
    Launch launch;
    launch.launcher = names.launcher;
    launch.size = integer_variable(variable, names.size, 1, kMaxRanks, 1);
    launch.rank = integer_variable(variable, names.rank, 0, launch.size - 1, 0);
    launch.local_rank = integer_variable(variable, names.local_rank, 0, launch.size - 1, 0);
    if (names.local_size != nullptr) {
      launch.local_size = integer_variable(variable, names.local_size, 0, launch.size, 0);
    }
    return launch;
  }
  return {};
}

std::vector<std::string> mpi_plugin_candidates() {
  std::vector<std::string> candidates;
  if (const char* chosen = std::getenv("LABPOSE_MPI_PLUGIN"); chosen != nullptr) {
    return {chosen};
  }
  const fs::path folder = executable_folder();
  const char* const name = "liblabpose-mpi.so";
  if (!folder.empty()) {
    candidates.push_back((folder / name).string());
    candidates.push_back((folder.parent_path() / "lib" / "labpose" / name).string());
  }
  // Where the build put it ("" in a build without MPI), for programs run from the build folder.
  if (const std::string built = LABPOSE_MPI_PLUGIN_BUILD_PATH; !built.empty()) {
    candidates.push_back(built);
  }
  return candidates;
}

std::unique_ptr<nets::Communicator> join_world() {
  const Launch launch = launch_from_environment();
  if (launch.size <= 1) return std::make_unique<nets::SingleProcess>();
  const double timeout = rank_timeout();
  auto communicator = std::make_unique<MpiCommunicator>(load_plugin(launch), timeout);
  if (communicator->size() != launch.size || communicator->rank() != launch.rank) {
    throw Error(fmt::format("{} set rank {} of {}, but MPI says rank {} of {}", launch.launcher,
                            launch.rank, launch.size, communicator->rank(), communicator->size()),
                "labpose and the launcher use different MPI installations; build labpose with "
                "the MPI of the mpirun you start it with");
  }
  return communicator;
}

std::string launched_device(const std::string& device, const Launch& launch) {
  if (launch.size == 1) return device;
  std::string kind = "cuda";
  const bool wants_gpu = device == "auto" || device.starts_with(kind);
  const int gpus = wants_gpu ? usable_gpus(kind) : 0;
  std::string chosen = device;
  if (device == "auto" || device == kind) {
    if (gpus > 0 && launch.local_rank >= gpus) {
      throw Error(fmt::format("rank {} is the rank {} on its machine, which has {} usable GPU{}: "
                              "two ranks would share a GPU",
                              launch.rank, launch.local_rank, gpus, gpus == 1 ? "" : "s"),
                  "start at most one rank per GPU (mpirun -np <GPUs>, or srun "
                  "--ntasks-per-node=<GPUs>)");
    }
    chosen = gpus > 0           ? fmt::format("{}:{}", kind, launch.local_rank)
             : device == "auto" ? "cpu"
                                : device;
  } else if (wants_gpu && launch.local_size > 1) {
    throw Error(fmt::format("--device {} gives the same GPU to the {} ranks on this machine",
                            device, launch.local_size),
                "use --device auto (or cuda): each rank then takes the GPU of its local rank");
  }
  if (chosen == "cpu" || chosen == "ref") share_cores(launch);
  return chosen;
}

std::string rank_device(const std::string& device, nets::Communicator& world) {
  if (world.size() == 1) return device;
  Launch launch;
  launch.size = world.size();
  launch.rank = world.rank();
  launch.local_rank = world.local_rank();
  launch.local_size = world.local_size();
  const std::string chosen = launched_device(device, launch);
  // Every rank on a GPU, or every rank on the CPU: a mixed job would wait for its slowest rank.
  const bool on_gpu = chosen != "cpu" && chosen != "ref";
  const std::array<double, 1> mine{on_gpu ? 1.0 : 0.0};
  const nets::RangeOverRanks range = nets::range_over_ranks(world, mine);
  if (range.low[0] != range.high[0]) {
    throw Error(
        fmt::format("rank {} trains on {}, but other ranks of the job train on {}", world.rank(),
                    on_gpu ? chosen : "the CPU", on_gpu ? "the CPU" : "a GPU"),
        "give every machine of the job GPUs, or train every rank on the CPU (--device cpu)");
  }
  return chosen;
}

std::unique_ptr<nets::Communicator> device_communicator(nets::Communicator& world,
                                                        nets::Backend& backend) {
  if (backend.host_memory()) return nullptr;
  const std::string name = backend.name();
  const nets::BackendKind* kind = find_kind(name.substr(0, name.find(':')));
  if (kind == nullptr || !kind->communicator) {
    throw Error(fmt::format("{} ranks on {} cannot exchange gradients: there is no communicator "
                            "for its memory",
                            world.size(), name),
                "train the ranks on the CPU (--device cpu)");
  }
  return kind->communicator(world, backend);
}

}  // namespace labpose::devices

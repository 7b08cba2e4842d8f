// cuDNN and NCCL opened at run time: a CUDA build needs neither to start, finds them as the dynamic
// linker does, and says which library it refused and why (not found, another major version, built
// for another CUDA, a function missing). Stand-in libraries play the mismatches. No GPU needed.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include <cstdlib>
#include <regex>
#include <string>

#include "core/error.hpp"
#include "cuda/cudnn_api.hpp"
#include "cuda/cudnn_handles.hpp"
#include "cuda/shared_library.hpp"
#include "tests/support/test_support.hpp"
#if LABPOSE_TEST_NCCL
#include "cuda/nccl_api.hpp"
#endif

namespace labpose::cuda {
namespace {

using testing::contains;
using testing::ScopedEnvironment;
using testing::shell_quote;

std::string fake_cudnn(const std::string& name) {
  return std::string(LABPOSE_FAKE_CUDNN_DIR) + "/" + name + "/libcudnn.so.9";
}

TEST(CudaLibraries, TheCudnnOfThisBuildOpensAndPairs) {
  const CudnnLibrary library = open_cudnn(cudnn_candidates());
  ASSERT_TRUE(library.usable()) << library.problem;
  EXPECT_EQ(library.version / 10000, static_cast<std::size_t>(CUDNN_MAJOR));
  EXPECT_TRUE(contains(library.path, "/libcudnn.so.9")) << library.path;
  EXPECT_NE(library.api.ConvolutionForward, nullptr);
  EXPECT_NE(library.api.BatchNormalizationBackward, nullptr);
  EXPECT_EQ(library.api.GetVersion(), library.version);
}

TEST(CudaLibraries, AMissingCudnnIsNamedWithWhatTheLoaderSaid) {
  const CudnnLibrary library = open_cudnn({"/nonexistent/libcudnn.so.9"});
  EXPECT_FALSE(library.usable());
  EXPECT_TRUE(contains(library.problem, "cuDNN could not be loaded")) << library.problem;
  EXPECT_TRUE(contains(library.problem, "/nonexistent/libcudnn.so.9: cannot open shared object"))
      << library.problem;
  EXPECT_EQ(library.api.Create, nullptr);
}

TEST(CudaLibraries, EveryCandidateIsTriedInTurn) {
  const CudnnLibrary library = open_cudnn({"/nonexistent/libcudnn.so.9", fake_cudnn("old")});
  EXPECT_EQ(library.path, fake_cudnn("old"));
  EXPECT_EQ(library.version, 80907U);
}

TEST(CudaLibraries, ACudnnOfAnotherMajorVersionIsRefusedByItsVersion) {
  const CudnnLibrary library = open_cudnn({fake_cudnn("old")});
  EXPECT_FALSE(library.usable());
  EXPECT_TRUE(contains(library.problem, fake_cudnn("old") + " is cuDNN 8.9.7, but labpose was "
                                                            "built with cuDNN 9"))
      << library.problem;
  EXPECT_EQ(library.api.GetVersion, nullptr) << "a refused library leaves no function behind";
}

TEST(CudaLibraries, ACudnnBuiltForAnotherCudaIsRefused) {
  const CudnnLibrary library = open_cudnn({fake_cudnn("other_cuda")});
  EXPECT_FALSE(library.usable());
  EXPECT_TRUE(contains(library.problem,
                       fmt::format("is cuDNN 9.19.0 built for CUDA 12, but labpose was built with "
                                   "CUDA {}",
                                   CUDART_VERSION / 1000)))
      << library.problem;
}

TEST(CudaLibraries, ACudnnLackingAFunctionNamesIt) {
  const CudnnLibrary library = open_cudnn({fake_cudnn("incomplete")});
  EXPECT_FALSE(library.usable());
  EXPECT_TRUE(contains(library.problem,
                       "has no cudnnGetErrorString, which labpose (built with "
                       "cuDNN 9."))
      << library.problem;
}

TEST(CudaLibraries, ALibraryThatIsNotCudnnIsSaidToBeSo) {
  const CudnnLibrary library = open_cudnn({"libm.so.6"});
  EXPECT_FALSE(library.usable());
  EXPECT_TRUE(std::regex_search(
      library.problem, std::regex("/libm\\.so\\.6 is not cuDNN: it has no cudnnGetVersion")))
      << library.problem;
}

TEST(CudaLibraries, TheEnvironmentChoosesTheCudnnAlone) {
  const ScopedEnvironment chosen("LABPOSE_CUDNN_LIBRARY", "/opt/cudnn/libcudnn.so.9");
  EXPECT_EQ(cudnn_candidates(), std::vector<std::string>{"/opt/cudnn/libcudnn.so.9"});
}

TEST(CudaLibraries, CudnnErrorsNameTheFunctionCalled) {
  try {
    LABPOSE_CUDNN_CHECK(cudnn().SetStream(nullptr, nullptr), "starting cuDNN");
    FAIL() << "a null handle is refused";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "cuDNN failed in starting cuDNN: cudnnSetStream: "))
        << error.what();
  }
}

#if LABPOSE_TEST_NCCL
TEST(CudaLibraries, TheNcclOfThisBuildOpensAndAMissingOneIsNamed) {
  const NcclLibrary library = open_nccl(nccl_candidates());
  ASSERT_TRUE(library.usable()) << library.problem;
  EXPECT_EQ(library.version / 10000, NCCL_MAJOR);
  EXPECT_NE(library.api.AllReduce, nullptr);
  const NcclLibrary missing = open_nccl({"/nonexistent/libnccl.so.2"});
  EXPECT_TRUE(contains(missing.problem, "NCCL could not be loaded (/nonexistent/libnccl.so.2: "))
      << missing.problem;
  const NcclLibrary not_nccl = open_nccl({fake_cudnn("old")});
  EXPECT_TRUE(contains(not_nccl.problem, "is not NCCL: it has no ncclGetVersion"))
      << not_nccl.problem;
}
#endif

// The binary itself: no cuDNN, cuBLAS or NCCL among the libraries it needs to start.
TEST(CudaLibraries, LabposeNeedsNoGpuLibraryToStart) {
  const testing::CommandResult elf =
      testing::run("readelf -W -d " + shell_quote(testing::labpose_binary()));
  ASSERT_EQ(elf.exit_code, 0) << elf.output;
  ASSERT_TRUE(contains(elf.output, "(NEEDED)")) << elf.output;
  for (const char* library : {"libcudnn", "libnccl", "libcublas", "libcudart"}) {
    EXPECT_FALSE(contains(elf.output, std::string("[") + library)) << library << "\n" << elf.output;
  }
}

// Masked cuDNN: doctor, a CPU command, runs and says why the GPU path is closed.
TEST(CudaLibraries, DoctorRunsWithoutCudnnAndSaysWhy) {
  const testing::CommandResult masked =
      testing::run("LABPOSE_CUDNN_LIBRARY=/nonexistent/libcudnn.so.9 " +
                   shell_quote(testing::labpose_binary()) + " doctor");
  EXPECT_EQ(masked.exit_code, 0) << masked.output;
  EXPECT_TRUE(contains(masked.output,
                       "no usable cuDNN: cuDNN could not be loaded "
                       "(/nonexistent/libcudnn.so.9: cannot open shared object"))
      << masked.output;
  EXPECT_TRUE(contains(masked.output, "oneDNN")) << masked.output;
}

// The dynamic linker's search path comes first, and what it finds is checked.
TEST(CudaLibraries, DoctorChecksTheCudnnTheSearchPathFinds) {
  const testing::CommandResult found =
      testing::run("LD_LIBRARY_PATH=" + shell_quote(std::string(LABPOSE_FAKE_CUDNN_DIR) + "/old") +
                   " " + shell_quote(testing::labpose_binary()) + " doctor");
  EXPECT_EQ(found.exit_code, 0) << found.output;
  EXPECT_TRUE(contains(found.output, "no usable cuDNN: " + fake_cudnn("old") +
                                         " is cuDNN 8.9.7, but labpose was built with cuDNN 9"))
      << found.output;
}

}  // namespace
}  // namespace labpose::cuda

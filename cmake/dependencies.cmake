# Every dependency comes from Debian packages (tools/install-deps.sh); CUDA + cuDNN from the NVIDIA
# toolkit when present. Pitfalls: yaml-cpp 0.7's target is `yaml-cpp`; oneDNN's config needs OpenCL;
# FFmpeg, cpp-httplib and libzip come through pkg-config only; HDF5 headers live in hdf5/serial;
# MPI is found through mpicc (Debian's Open MPI, or a cluster's module).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)  # the oneDNN build of Debian uses OpenMP; so do our loops
find_package(OpenCV 4 REQUIRED COMPONENTS core imgproc imgcodecs videoio)
# The project's PNG and JPEG files (pipeline/images): libpng and libjpeg-turbo themselves, not
# OpenCV's codec module (tests only, as an oracle), which loads GDAL, poppler and database clients.
find_package(PNG REQUIRED)
find_package(JPEG REQUIRED)
find_package(ZLIB REQUIRED)
pkg_check_modules(FFMPEG REQUIRED IMPORTED_TARGET libavformat libavcodec libswscale libavutil)
# libavdevice (cameras) is loaded at run time by pipeline/video/capture.cpp, not linked: only its
# headers are needed here (its version names the library to load).
pkg_check_modules(AVDEVICE REQUIRED libavdevice)
find_package(yaml-cpp REQUIRED)
if(NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
# oneDNN: Debian's 2.6 by default; LABPOSE_ONEDNN_PREFIX names a prefix with another build (oneDNN
# 3.2 from PyPI: tools/install-onednn.sh PREFIX), found there only, by its CMake config.
set(LABPOSE_ONEDNN_PREFIX "" CACHE PATH "prefix of a oneDNN build to use instead of Debian's")
if(LABPOSE_ONEDNN_PREFIX)
  find_package(dnnl CONFIG REQUIRED PATHS "${LABPOSE_ONEDNN_PREFIX}" NO_DEFAULT_PATH)
else()
  find_package(dnnl CONFIG REQUIRED)
endif()
message(STATUS "oneDNN ${dnnl_VERSION} from ${dnnl_DIR}")
find_package(CLI11 CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(nlohmann_json 3.10 CONFIG REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)  # PyTorch zip checkpoints
find_package(CURL REQUIRED)  # labpose weights fetch downloads ImageNet checkpoints
find_package(OpenSSL REQUIRED COMPONENTS Crypto)  # their SHA-256 (libssl-dev, which libcurl needs)
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(GTest REQUIRED)
# LEMON (Debian's liblemon-dev) for the min-cost flow that stitches tracklets into tracks; its
# lemonConfig.cmake names only the static library, so the shared one is found here.
find_path(LEMON_INCLUDE_DIR lemon/network_simplex.h)
find_library(LEMON_LIBRARY NAMES emon lemon)
if(NOT LEMON_INCLUDE_DIR OR NOT LEMON_LIBRARY)
  message(FATAL_ERROR "the LEMON graph library was not found: apt-get install liblemon-dev "
                      "(tools/install-deps.sh)")
endif()
add_library(LEMON::lemon UNKNOWN IMPORTED)
set_target_properties(LEMON::lemon PROPERTIES IMPORTED_LOCATION "${LEMON_LIBRARY}"
                      INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${LEMON_INCLUDE_DIR}")
# ONNX export (nets/onnx): Debian's libonnx-dev 1.12. Its targets link protobuf::libprotobuf without
# finding it, so Protobuf comes first; use the targets `onnx` and `onnx_proto` (its ONNX_INCLUDE_DIRS
# points to /usr/lib/include).
find_package(Protobuf REQUIRED)
find_package(ONNX CONFIG)
if(NOT ONNX_FOUND)
  message(FATAL_ERROR "the ONNX library was not found: apt-get install libonnx-dev libprotobuf-dev "
                      "(tools/install-deps.sh)")
endif()
# MPI for data-parallel training: only the plugin devices/mpi/ links it, so labpose runs without it.
find_package(MPI REQUIRED COMPONENTS C)

# CUDA + cuDNN: on by default where found; OFF turns them off; ON makes them required.
set(LABPOSE_CUDA_FOUND FALSE)
if(NOT LABPOSE_WITH_CUDA STREQUAL "OFF")
  if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
  endif()
  if(CUDAToolkit_FOUND AND CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
    # nvcc compiles the kernels with the same host compiler as the rest; the toolkit's nvcc unless
    # CUDACXX or CMAKE_CUDA_COMPILER says otherwise.
    if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND CUDAToolkit_NVCC_EXECUTABLE)
      set(CMAKE_CUDA_COMPILER "${CUDAToolkit_NVCC_EXECUTABLE}")
    endif()
    if(NOT DEFINED CMAKE_CUDA_HOST_COMPILER)
      set(CMAKE_CUDA_HOST_COMPILER "${CMAKE_CXX_COMPILER}")
    endif()
    include(CheckLanguage)
    check_language(CUDA)
  endif()
  if(CUDAToolkit_FOUND AND CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY AND CMAKE_CUDA_COMPILER)
    # Turing (7.5, the oldest CUDA 13 supports), Ampere (8.0, 8.6), Ada (8.9), Hopper (9.0) as
    # machine code, plus PTX of 9.0 that the driver compiles for newer GPUs.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 75-real 80-real 86-real 89-real 90-real 90-virtual)
    endif()
    # CMake 3.25 knows no C++20 flag for nvcc: the .cu files (kernels only) and the headers they
    # include are C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    # Debian's packages (fmt, ...) export /usr/include; as an explicit -isystem for nvcc it breaks
    # <cmath>'s #include_next. It is the host compiler's own directory: keep it implicit.
    list(APPEND CMAKE_CUDA_IMPLICIT_INCLUDE_DIRECTORIES ${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES})
    # cuDNN's headers only: the library is opened at run time (cuda/cudnn_api.hpp), from the
    # dynamic linker's search path or, failing that, from where it was found here.
    get_filename_component(CUDNN_LIBRARY_DIR "${CUDNN_LIBRARY}" DIRECTORY)
    add_library(labpose_cudnn INTERFACE)
    target_include_directories(labpose_cudnn SYSTEM INTERFACE "${CUDNN_INCLUDE_DIR}")
    target_compile_definitions(labpose_cudnn INTERFACE
                               LABPOSE_CUDNN_BUILD_DIRECTORY="${CUDNN_LIBRARY_DIR}")
    set(LABPOSE_CUDA_FOUND TRUE)
    message(STATUS "labpose: CUDA ${CUDAToolkit_VERSION} with cuDNN (${CUDNN_LIBRARY}): CUDA backend on, "
                   "architectures ${CMAKE_CUDA_ARCHITECTURES}")
  elseif(LABPOSE_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "LABPOSE_WITH_CUDA=ON but the CUDA toolkit with cuDNN and nvcc was not found "
                        "(looked in ${CUDAToolkit_ROOT}); set CUDAToolkit_ROOT or use -DLABPOSE_WITH_CUDA=OFF")
  else()
    message(STATUS "labpose: CUDA toolkit with cuDNN not found: building without the CUDA backend")
  endif()
endif()

# The Python package (tools/python): on where pybind11 (Debian's pybind11-dev) and the headers of
# Python (python3-dev) are found; ON makes them required. Debian's /usr/bin/python3 unless
# Python3_EXECUTABLE names another (pip install . passes the interpreter that installs). Every
# library is then position-independent code, as the module links them in. Sanitizer builds leave it
# out: an instrumented module cannot load into an uninstrumented interpreter.
set(LABPOSE_PYTHON_FOUND FALSE)
if(NOT LABPOSE_WITH_PYTHON STREQUAL "OFF" AND NOT LABPOSE_SANITIZE)
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "the Python the package is built for")
  endif()
  find_package(Python3 3.9 QUIET COMPONENTS Interpreter Development.Module)
  if(Python3_FOUND)
    set(PYBIND11_FINDPYTHON ON)
    find_package(pybind11 2.6 CONFIG QUIET)
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(LABPOSE_PYTHON_FOUND TRUE)
    set(CMAKE_POSITION_INDEPENDENT_CODE ON)
    message(STATUS "labpose: Python package on (Python ${Python3_VERSION} at ${Python3_EXECUTABLE}, "
                   "pybind11 ${pybind11_VERSION})")
  elseif(LABPOSE_WITH_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "LABPOSE_WITH_PYTHON=ON but pybind11 or Python's headers were not found: "
                        "apt-get install pybind11-dev python3-dev (tools/install-deps.sh)")
  else()
    message(STATUS "labpose: pybind11 or Python's headers not found: building without the Python "
                   "package (apt-get install pybind11-dev python3-dev)")
  endif()
endif()

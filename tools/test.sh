#!/usr/bin/env bash
# Installs what is missing (Debian packages, including the test-only Python packages and Clang), checks
# the formatting, builds labpose with warnings as errors and runs every test with ctest, then builds the
# fuzz harnesses with Clang (libFuzzer, ASan+UBSan) and runs each for 20 s over its corpus.
# Usage: tools/test.sh [ctest arguments]   (they apply to the main ctest run)
# Environment: BUILD_DIR (default build), FUZZ_BUILD_DIR (default build-fuzz), ONEDNN3_BUILD_DIR (default
# build-onednn3), JOBS (default: all cores; the builds, the fuzzers and the tests other than the
# conformance ones, which run one at a time, as explained below).
# The longer checks (every unit test under ASan+UBSan and TSan, 15-minute fuzzing, clang-tidy) are
# tools/check.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
fuzz_build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${JOBS:-$(nproc)}"
# Where the time goes, for keeping CI short: each step's end, in seconds since the start.
step_done() { echo "tools/test.sh: $1 done at ${SECONDS} s"; }

"$root/tools/install-deps.sh" --tests
"$root/tools/format.sh" --check
step_done "installing and the format check"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLABPOSE_WARNINGS_AS_ERRORS=ON
cmake --build "$build" -j "$jobs"
step_done "the build"
# The pandas/ruamel interoperability checks must run here, not skip: the packages were just installed.
export LABPOSE_REQUIRE_INTEROP_PYTHON=1
# The op and plan tests of every backend (label conformance) one at a time, with every core: their
# networks use all of them (oneDNN's OpenMP threads, and labpose's own kernels split their work
# across them, which these tests check), and two such tests at once make each layer's threads wait
# at its barrier for a thread the other test holds. Every other test runs with one OpenMP thread,
# `jobs` at a time: most of them start programs, write files and train tiny networks. On 2 cores
# the suite took 836 s one test at a time, and 503 s so (docs/reliability.md).
(cd "$build" && ctest --output-on-failure -j 1 -L conformance "$@")
(cd "$build" && OMP_NUM_THREADS=1 ctest --output-on-failure -j "$jobs" -LE conformance "$@")
step_done "the tests"

# The other oneDNN (docs/nets.md#onednn-versions): oneDNN 3.2 from PyPI in a prefix under the checkout,
# and the op and plan tests of every backend (backend_tests) built against it.
onednn3_build="${ONEDNN3_BUILD_DIR:-$root/build-onednn3}"
"$root/tools/install-onednn.sh" "$root/.deps/onednn-3.2"
cmake -S "$root" -B "$onednn3_build" -DCMAKE_BUILD_TYPE=Release -DLABPOSE_WARNINGS_AS_ERRORS=ON \
  -DLABPOSE_WITH_CUDA=OFF -DLABPOSE_ONEDNN_PREFIX="$root/.deps/onednn-3.2"
cmake --build "$onednn3_build" -j "$jobs" --target backend_tests
"$onednn3_build/tests/backend_tests" --gtest_brief=1
step_done "oneDNN 3.2's build and backend tests"

# Fuzzing: a Clang build of the harnesses with ASan+UBSan, each fuzzed for 20 s with a fixed seed.
CC=clang CXX=clang++ cmake -S "$root" -B "$fuzz_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLABPOSE_SANITIZE=address,undefined -DLABPOSE_FUZZ=ON -DLABPOSE_WITH_CUDA=OFF
cmake --build "$fuzz_build" -j "$jobs" --target fuzzers
source "$root/tests/sanitizers/options.sh"
(cd "$fuzz_build" && ctest --output-on-failure -j "$jobs" -L fuzz)
step_done "the fuzzers' build and runs"

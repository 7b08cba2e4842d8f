#!/usr/bin/env bash
# Installs what is missing (Debian packages, including the test-only Python packages), builds labpose
# with warnings as errors, and runs every test with ctest. Usage: tools/test.sh [ctest arguments]
# Environment: BUILD_DIR (default build), JOBS (default: all cores).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
jobs="${JOBS:-$(nproc)}"

"$root/tools/install-deps.sh" --tests
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLABPOSE_WARNINGS_AS_ERRORS=ON
cmake --build "$build" -j "$jobs"
# The pandas/ruamel interoperability checks must run here, not skip: the packages were just installed.
export LABPOSE_REQUIRE_INTEROP_PYTHON=1
cd "$build"
ctest --output-on-failure -j "$jobs" "$@"

#!/usr/bin/env bash
# The long checks, to run before landing a change to a reader of files, a thread or the label
# server (README, Reliability): every unit test under ASan+UBSan (Clang), the threaded tests under
# TSan, each fuzz harness for FUZZ_SECONDS (default 900, over a copy of its corpus; new findings
# land in build-fuzz/tests/fuzz/run-<name>/artifacts), and clang-tidy over the tree.
# Usage: tools/check.sh [asan] [tsan] [fuzz] [tidy]   (default: all four, in that order)
# Environment: JOBS (default: all cores), FUZZ_SECONDS (default 900).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="${JOBS:-$(nproc)}"
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(asan tsan fuzz tidy)
"$root/tools/install-deps.sh" --tests
source "$root/tests/sanitizers/options.sh"

# One Clang build serves ASan+UBSan and the fuzzers (libFuzzer needs Clang).
configure_fuzz_build() {
  CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLABPOSE_SANITIZE=address,undefined -DLABPOSE_FUZZ=ON -DLABPOSE_WITH_CUDA=OFF
}

for step in "${steps[@]}"; do
  case "$step" in
    asan)
      configure_fuzz_build
      cmake --build "$root/build-fuzz" -j "$jobs"
      (cd "$root/build-fuzz" && ctest --output-on-failure -j "$jobs" -L unit)
      ;;
    tsan)
      # libgomp is not instrumented: one OpenMP thread, so the network's loops run on the caller's.
      cmake -S "$root" -B "$root/build-tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DLABPOSE_SANITIZE=thread -DLABPOSE_WITH_CUDA=OFF
      cmake --build "$root/build-tsan" -j "$jobs" --target core_tests pipeline_tests labeling_tests
      (cd "$root/build-tsan" && OMP_NUM_THREADS=1 ctest --output-on-failure -j "$jobs" \
        -R '^(AtomicFile|Analyze|BatchLoader|VideoReader|LiveCapture|LabelServerTest|LabelStore[A-Za-z]*)[.]|^Trainer[.](Resuming|Unfreezing)')
      ;;
    fuzz)
      configure_fuzz_build
      cmake --build "$root/build-fuzz" -j "$jobs" --target fuzzers
      (cd "$root/build-fuzz" && LABPOSE_FUZZ_SECONDS="${FUZZ_SECONDS:-900}" \
        ctest --output-on-failure -j "$jobs" -L fuzz)
      ;;
    tidy)
      # Clang's compile commands (g++'s precompiled headers are unreadable to clang-tidy); the
      # CUDA backend's host files from the g++ build, the only one that compiles them.
      configure_fuzz_build >/dev/null
      cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
      cmake --build "$root/build-fuzz" --target labpose >/dev/null  # its precompiled header
      # The Python module is left out of sanitizer builds (cmake/dependencies.cmake): not tidied.
      mapfile -t files < <(cd "$root" && git ls-files '*.cpp' |
        grep -v -e '^cuda/' -e '^tests/cuda/' -e '^tools/python/')
      mapfile -t cuda_files < <(cd "$root" && git ls-files 'cuda/*.cpp' 'tests/cuda/*.cpp')
      run-clang-tidy -quiet -j "$jobs" -p "$root/build-fuzz" \
        -extra-arg=-Wno-unknown-warning-option "${files[@]/#/$root/}"
      run-clang-tidy -quiet -j "$jobs" -p "$root/build" \
        -extra-arg=-Wno-unknown-warning-option "${cuda_files[@]/#/$root/}"
      ;;
    *) echo "check.sh: unknown step $step (use asan, tsan, fuzz, tidy)" >&2; exit 2 ;;
  esac
done
echo "check.sh: ${steps[*]}: all passed"

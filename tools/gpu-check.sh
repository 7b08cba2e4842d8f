#!/usr/bin/env bash
# labpose on this machine's GPU: the GPU tests, then `labpose bench --device cuda` beside PyTorch eager
# on the same networks and sizes (where python3 has torch), as one table (tools/bench/gpu_check.py).
# Without a usable GPU it says so and exits 0. Runs from a build tree or from a pack without one.
# Usage: tools/gpu-check.sh [--labpose PATH] [--test-dir DIR] [--quick] [--skip-tests]
# Environment: PYTHON, the interpreter whose torch is the peer (default python3).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "${PYTHON:-python3}" "$root/tools/bench/gpu_check.py" "$@"

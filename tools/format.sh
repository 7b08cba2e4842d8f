#!/usr/bin/env bash
# clang-format over every C++ and CUDA file of the project (.clang-format at the root).
# Usage: tools/format.sh            reformat the files in place
#        tools/format.sh --check    list the files that differ and exit 1 (tools/test.sh runs this)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h')
else
  mapfile -t files < <(find core projects nets cuda devices pipeline labeling tools tests \
    -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.h')
fi
if [[ "${1:-}" == "--check" ]]; then
  # One clang-format for all files; each one that differs is named in its warnings.
  mapfile -t differ < <(clang-format --dry-run "${files[@]}" 2>&1 |
    sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
  if [[ ${#differ[@]} -gt 0 ]]; then
    echo "format: ${#differ[@]} file(s) differ from .clang-format: ${differ[*]}" >&2
    echo "format: run tools/format.sh to reformat them" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files follow .clang-format"
else
  clang-format -i "${files[@]}"
fi

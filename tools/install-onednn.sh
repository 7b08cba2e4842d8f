#!/usr/bin/env bash
# Makes a prefix with Intel's oneDNN 3.2 from PyPI (the GNU OpenMP build, as Debian's 2.6.3 is), for
# building labpose against it instead of Debian's libdnnl-dev:
#   tools/install-onednn.sh [PREFIX]            (default: .deps/onednn-3.2 under the checkout)
#   cmake -S . -B build-onednn3 -DLABPOSE_ONEDNN_PREFIX=PREFIX
# Idempotent: does nothing when PREFIX already holds this version. The two wheels are pinned by
# version and SHA-256 and unpacked with Python's zipfile (no pip install, no virtualenv): the prefix
# holds lib/libdnnl.so.3, include/ and lib/cmake/dnnl (the CMake config labpose finds it by).
# Why 3.2: PyPI's newer `onednn` wheels (2024.0 on) are built for SYCL and need Intel's compiler
# runtime; onednn-cpu-gomp 2023.2.0 is the newest build with the OpenMP runtime labpose uses.
# docs/nets.md#onednn-versions says which build is the default and why.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${1:-$root/.deps/onednn-3.2}"
version=2023.2.0
declare -A sha256=(
  [onednn-cpu-gomp]=2f22a54d6a890ed14bfa185d42a4be65d8b5b1df85dc1f0f3a9abe31620416fb
  [onednn-devel-cpu-gomp]=9763c69e8c907e119056bd52ad918ca84ac9ba939d130a99dfa95ccca3e5e284
)

if [[ -f "$prefix/lib/cmake/dnnl/dnnl-config.cmake" && -f "$prefix/.labpose-onednn-$version" ]]; then
  echo "install-onednn: oneDNN from onednn-cpu-gomp $version already in $prefix"
  exit 0
fi
command -v pip3 >/dev/null 2>&1 || "$root/tools/install-deps.sh"

download="$(mktemp -d)"
trap 'rm -rf "$download"' EXIT
for package in onednn-cpu-gomp onednn-devel-cpu-gomp; do
  echo "install-onednn: downloading $package $version from PyPI"
  if ! pip3 download --quiet --no-deps --only-binary=:all: --platform manylinux1_x86_64 \
      --python-version 3 --implementation py --abi none -d "$download" "$package==$version" \
      >"$download/pip.log" 2>&1; then
    cat "$download/pip.log" >&2
    echo "install-onednn: error: cannot download $package==$version from PyPI (above: pip's reason)" >&2
    echo "install-onednn: hint: build against Debian's oneDNN instead (the default: no LABPOSE_ONEDNN_PREFIX)" >&2
    exit 1
  fi
done

for wheel in "$download"/*.whl; do
  name="$(basename "$wheel")"
  package="${name%%-$version-*}"
  package="${package//_/-}"
  expected="${sha256[$package]:-}"
  actual="$(sha256sum "$wheel" | cut -d' ' -f1)"
  if [[ "$actual" != "$expected" ]]; then
    echo "install-onednn: error: $name has SHA-256 $actual, not the pinned $expected" >&2
    echo "install-onednn: hint: a mirror or proxy changed the file; nothing was installed" >&2
    exit 1
  fi
done

# Unpack into a folder beside the prefix, then rename: an interrupted run leaves no half prefix.
mkdir -p "$(dirname "$prefix")"
staging="$(mktemp -d "$prefix.partial.XXXXXX")"
trap 'rm -rf "$download" "$staging"' EXIT
python3 - "$download" "$staging" "$version" <<'EOF'
import hashlib, pathlib, sys, zipfile
download, staging, version = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
for wheel in sorted(download.glob("*.whl")):
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            parts = pathlib.PurePosixPath(member.filename).parts
            # Wheels keep the files of the prefix under <name>-<version>.data/data/.
            if len(parts) < 4 or not parts[0].endswith(".data") or parts[1] != "data" or member.is_dir():
                continue
            target = staging.joinpath(*parts[2:])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(member))
            if parts[-2] == "lib" and ".so" in parts[-1]:
                target.chmod(0o755)
# Zip keeps no links: libdnnl.so and libdnnl.so.3 arrive as copies of libdnnl.so.3.N.
libraries = sorted((staging / "lib").glob("libdnnl.so*"), key=lambda path: len(path.name))
for alias in libraries[:-1]:
    alias.unlink()
    alias.symlink_to(libraries[-1].name)
EOF
touch "$staging/.labpose-onednn-$version"
rm -rf "$prefix"
chmod 755 "$staging"
mv "$staging" "$prefix"
echo "install-onednn: oneDNN 3.2 (onednn-cpu-gomp $version) in $prefix"

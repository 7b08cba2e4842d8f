"""The PEP 517 backend of `pip install .`: configures and builds the target labpose_python with the
project's CMake (into a temporary folder, or the folder the config setting `build-dir` names) and
packs the package it lays out (<build>/python/labpose) into a wheel. Standard library only; the C++
dependencies are Debian packages (tools/install-deps.sh), never downloaded here. Not a general
CMake backend: it knows this project's one target."""
import base64
import csv
import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

NAME = "labpose"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        found = re.search(r"project\(labpose VERSION ([0-9.]+)", f.read())
    if not found:
        raise RuntimeError("CMakeLists.txt has no project(labpose VERSION ...)")
    return found.group(1)


def _tag():
    interpreter = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{interpreter}-{interpreter}-{platform}"


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\n"
            "Summary: markerless pose estimation for lab-animal video, with DeepLabCut's project "
            "files\nRequires-Python: >=3.9\nRequires-Dist: numpy\n")


def _wheel_file():
    return f"Wheel-Version: 1.0\nGenerator: labpose build_backend\nRoot-Is-Purelib: false\nTag: {_tag()}\n"


def _dist_info():
    return f"{NAME}-{_version()}.dist-info"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    folder = os.path.join(metadata_directory, _dist_info())
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "METADATA"), "w") as f:
        f.write(_metadata())
    with open(os.path.join(folder, "WHEEL"), "w") as f:
        f.write(_wheel_file())
    return _dist_info()


def _run(command):
    print("labpose build: " + " ".join(command), file=sys.stderr, flush=True)
    status = subprocess.call(command, stdout=sys.stderr)
    if status != 0:
        raise RuntimeError(f"{command[0]} failed with status {status}; if a library is missing, "
                           f"run {os.path.join(ROOT, 'tools', 'install-deps.sh')} first")


def _configured_python(build):
    """The Python a configured build folder's module is for, or None."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            found = re.search(r"(?m)^Python3_EXECUTABLE:\w+=(.*)$", f.read())
    except OSError:
        return None
    return found.group(1) if found else None


def _build(build):
    configured = _configured_python(build)
    # A folder configured for this very interpreter (a virtualenv's python is a link to it) is only
    # brought up to date; anything else is configured for it, an existing folder keeping its type.
    if configured is None or os.path.realpath(configured) != os.path.realpath(sys.executable):
        configure = ["cmake", "-S", ROOT, "-B", build, "-DLABPOSE_WITH_PYTHON=ON",
                     f"-DPython3_EXECUTABLE={sys.executable}"]
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            configure.append("-DCMAKE_BUILD_TYPE=Release")
        _run(configure)
    _run(["cmake", "--build", build, "--target", "labpose_python", "-j", str(os.cpu_count() or 1)])
    return os.path.join(build, "python", NAME)


def _record_row(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    setting = (config_settings or {}).get("build-dir") or os.environ.get("LABPOSE_BUILD_DIR")
    with tempfile.TemporaryDirectory(prefix="labpose-wheel-build-") as temporary:
        package = _build(os.path.abspath(setting) if setting else temporary)
        wheel_name = f"{NAME}-{_version()}-{_tag()}.whl"
        records = []
        with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w",
                             zipfile.ZIP_DEFLATED) as wheel:
            def add(name, data):
                wheel.writestr(name, data)
                records.append(_record_row(name, data))

            for file in sorted(os.listdir(package)):
                path = os.path.join(package, file)
                if os.path.isfile(path) and not file.endswith(".pyc"):
                    with open(path, "rb") as f:
                        add(f"{NAME}/{file}", f.read())
            add(f"{_dist_info()}/METADATA", _metadata().encode())
            add(f"{_dist_info()}/WHEEL", _wheel_file().encode())
            record_name = f"{_dist_info()}/RECORD"
            text = io.StringIO()
            csv.writer(text, lineterminator="\n").writerows(records + [[record_name, "", ""]])
            wheel.writestr(record_name, text.getvalue())
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    """The files git tracks, as <name>-<version>/ in a .tar.gz."""
    files = subprocess.check_output(["git", "-C", ROOT, "ls-files", "-z"]).decode().split("\0")
    base = f"{NAME}-{_version()}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as archive:
        for file in filter(None, files):
            archive.add(os.path.join(ROOT, file), arcname=f"{base}/{file}", recursive=False)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return name

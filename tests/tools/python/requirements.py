"""What the Python package's checks need, and how they skip without it: status 77 (ctest's skip)
with a message, or a failure where LABPOSE_REQUIRE_INTEROP_PYTHON=1 (tools/test.sh installs it)."""
import importlib
import os
import sys


def missing(what, hint):
    """Ends the check: skipped, or failed where the requirement must be met."""
    if os.environ.get("LABPOSE_REQUIRE_INTEROP_PYTHON") == "1":
        sys.exit(f"error: {what} is missing: {hint}")
    print(f"skipped: {what} is not available ({hint})")
    sys.exit(77)


def require(modules, hint):
    """Imports `modules` (names) and returns them, or ends the check as missing()."""
    try:
        return [importlib.import_module(name) for name in modules]
    except ImportError:
        missing(" and ".join(modules), hint)

"""ctest's entry to the Python package's suite: pytest on this folder, with the package built in
place (PYTHONPATH=<build>/python). Skips (status 77) where pytest is missing, unless
LABPOSE_REQUIRE_INTEROP_PYTHON=1 (tools/test.sh installs it)."""
import os
import sys

from requirements import require

(pytest,) = require(["pytest"], "apt-get install python3-pytest")

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.dirname(os.path.abspath(__file__)),
                      *sys.argv[1:]]))

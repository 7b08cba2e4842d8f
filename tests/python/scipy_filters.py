"""SciPy's filters as DeepLabCut calls them, for comparison with labpose's (tests/pipeline/filter_test.cpp).

  scipy_filters.py SERIES_FILE WINDOW POLYORDER
      SERIES_FILE holds one number per line ("nan" for a missing sample). Prints one JSON object:
      "median": scipy.signal.medfilt(series, WINDOW) (series without NaN only), "savgol":
      savgol_filter(series, WINDOW, POLYORDER, mode="interp") (likewise), "spline": CubicSpline through
      the finite samples evaluated at every index (NaN outside the first..last finite sample)
"""
import json
import sys

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.signal import medfilt, savgol_filter


def main():
    path, window, polyorder = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    series = np.array([float(line) for line in open(path) if line.strip()])
    out = {}
    finite = np.isfinite(series)
    if finite.all():
        out["median"] = medfilt(series, window).tolist()
        out["savgol"] = savgol_filter(series, window, polyorder, mode="interp").tolist()
    x = np.flatnonzero(finite)
    spline = CubicSpline(x, series[finite])(np.arange(len(series)))
    spline[: x[0]] = np.nan
    spline[x[-1] + 1:] = np.nan
    out["spline"] = [None if np.isnan(v) else v for v in spline.tolist()]
    print(json.dumps(out))


if __name__ == "__main__":
    main()

"""DeepLabCut's FitSARIMAXModel (statsmodels' SARIMAX), for comparison with labpose's ARMA fit
(tests/pipeline/outliers_test.cpp).

  statsmodels_arma.py SERIES_FILE AR_DEGREE MA_DEGREE ALPHA
      SERIES_FILE holds one number per line ("nan" for a missing sample). Prints one JSON object:
      "mean", "lower", "upper" (the one-step-ahead predictions and their confidence interval, as
      DeepLabCut computes them), "params" (ar..., ma..., sigma2) and "llf" (the log likelihood).
"""
import json
import sys
import warnings

import numpy as np
import statsmodels.api as sm


def main():
    path, ar, ma, alpha = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    series = np.array([float(line) for line in open(path) if line.strip()])
    warnings.simplefilter("ignore")
    model = sm.tsa.statespace.SARIMAX(series, order=(ar, 0, ma), seasonal_order=(0, 0, 0, 0),
                                      simple_differencing=True)
    result = model.fit(disp=False)
    prediction = result.get_prediction(end=model.nobs - 1)
    interval = prediction.conf_int(alpha=alpha)
    print(json.dumps({
        "mean": prediction.predicted_mean.tolist(),
        "lower": interval[:, 0].tolist(),
        "upper": interval[:, 1].tolist(),
        "params": result.params.tolist(),
        "llf": float(result.llf),
    }))


if __name__ == "__main__":
    main()

// An ARMA(p, q) model fitted to one coordinate of a track by maximum likelihood, as DeepLabCut's
// FitSARIMAXModel does with statsmodels' SARIMAX(order=(p, 0, q)) for outlier extraction
// ("fitting") and the ARIMA filter: a Kalman filter over the Harvey state-space form with missing
// values (NaN) skipped, the stationary initial state, stationarity and invertibility kept by the
// Monahan/Jones transform, start values by conditional sum of squares, BFGS on the transformed
// parameters. Not seasonal, no trend or constant, no exogenous regressors.
#pragma once

#include <optional>
#include <vector>

namespace labpose::pipeline {

struct ArmaFit {
  std::vector<double> ar;  // phi_1..phi_p: x_t = sum phi_i x_{t-i} + e_t + sum theta_j e_{t-j}
  std::vector<double> ma;  // theta_1..theta_q
  double variance = 0.0;   // of e_t
  double log_likelihood = 0.0;
  std::vector<double> mean;          // one-step-ahead prediction of every sample (missing too)
  std::vector<double> lower, upper;  // its (1 - alpha) confidence interval
};

/// Fits `series` (NaN: missing). nullopt when it has 10 finite values or fewer (DeepLabCut then
/// gives NaN predictions). `alpha` in (0, 1).
std::optional<ArmaFit> fit_arma(const std::vector<double>& series, int ar_degree, int ma_degree,
                                double alpha);

/// One-step-ahead predictions of `series` by a given model (the Kalman filter of fit_arma).
ArmaFit predict_arma(const std::vector<double>& series, const std::vector<double>& ar,
                     const std::vector<double>& ma, double variance, double alpha);

/// statsmodels' constrain_stationary_univariate: any real vector to the AR coefficients of a
/// stationary process (and back; nullopt when `coefficients` are not stationary).
std::vector<double> constrain_stationary(const std::vector<double>& unconstrained);
std::optional<std::vector<double>> unconstrain_stationary(const std::vector<double>& coefficients);

}  // namespace labpose::pipeline

// fit_arma: exact Gaussian likelihood of an ARMA(p, q) process by the Kalman filter, maximized
// with BFGS over unconstrained parameters (the same parameterization as statsmodels' SARIMAX with
// enforce_stationarity and enforce_invertibility), from conditional-sum-of-squares start values.
#include "pipeline/analysis/arma.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// z with P(|N(0, 1)| > z) = alpha, by bisection on erfc (to double precision).
double normal_quantile_two_sided(double alpha) {
  double low = 0.0, high = 40.0;
  for (int step = 0; step < 200; ++step) {
    const double middle = 0.5 * (low + high);
    if (std::erfc(middle / std::numbers::sqrt2) > alpha) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return 0.5 * (low + high);
}

// The state-space form of Harvey: state dimension r = max(p, q + 1), transition T with the AR
// coefficients in its first column and ones above the diagonal, selection R = (1, theta_1, ...).
struct StateSpace {
  int r = 1;
  Eigen::MatrixXd transition;   // T: (r, r)
  Eigen::VectorXd selection;    // R: (r)
  Eigen::MatrixXd state_noise;  // variance * R R': (r, r)
  Eigen::MatrixXd initial_cov;  // P_0: the stationary covariance, P = T P T' + variance R R'
  bool valid = true;
};

StateSpace state_space(const std::vector<double>& ar, const std::vector<double>& ma,
                       double variance) {
  StateSpace model;
  const int p = static_cast<int>(ar.size()), q = static_cast<int>(ma.size());
  model.r = std::max(p, q + 1);
  const int r = model.r;
  model.transition = Eigen::MatrixXd::Zero(r, r);
  for (int i = 0; i < p; ++i) model.transition(i, 0) = ar[static_cast<std::size_t>(i)];
  for (int i = 0; i + 1 < r; ++i) model.transition(i, i + 1) = 1.0;
  model.selection = Eigen::VectorXd::Zero(r);
  model.selection(0) = 1.0;
  for (int j = 0; j < q; ++j) model.selection(j + 1) = ma[static_cast<std::size_t>(j)];
  model.state_noise = variance * model.selection * model.selection.transpose();
  // vec(P) = (I - T (x) T)^-1 vec(Q)
  const int n = r * r;
  Eigen::MatrixXd system = Eigen::MatrixXd::Identity(n, n);
  for (int i = 0; i < r; ++i) {
    for (int j = 0; j < r; ++j) {
      for (int k = 0; k < r; ++k) {
        for (int l = 0; l < r; ++l) {
          system(i * r + k, j * r + l) -= model.transition(i, j) * model.transition(k, l);
        }
      }
    }
  }
  const Eigen::VectorXd noise = Eigen::Map<const Eigen::VectorXd>(model.state_noise.data(), n);
  const Eigen::VectorXd solution = system.fullPivLu().solve(noise);
  model.initial_cov = Eigen::Map<const Eigen::MatrixXd>(solution.data(), r, r);
  model.initial_cov = 0.5 * (model.initial_cov + model.initial_cov.transpose());
  model.valid = solution.allFinite() && model.initial_cov(0, 0) > 0.0;
  return model;
}

// Runs the filter; fills the one-step-ahead means and variances when asked. Returns the log
// likelihood of the finite samples (-inf for a degenerate model).
double kalman_filter(const std::vector<double>& series, const StateSpace& model,
                     std::vector<double>* mean, std::vector<double>* variance) {
  if (!model.valid) return -std::numeric_limits<double>::infinity();
  const int r = model.r;
  Eigen::VectorXd state = Eigen::VectorXd::Zero(r);
  Eigen::MatrixXd cov = model.initial_cov;
  Eigen::VectorXd gain(r);
  double log_likelihood = 0.0;
  constexpr double kLogTwoPi = 1.8378770664093453;
  for (std::size_t t = 0; t < series.size(); ++t) {
    const double forecast = state(0), forecast_variance = cov(0, 0);
    if (mean != nullptr) (*mean)[t] = forecast;
    if (variance != nullptr) (*variance)[t] = forecast_variance;
    if (std::isfinite(series[t])) {
      if (!(forecast_variance > 0.0)) return -std::numeric_limits<double>::infinity();
      const double error = series[t] - forecast;
      log_likelihood -=
          0.5 * (kLogTwoPi + std::log(forecast_variance) + error * error / forecast_variance);
      gain = cov.col(0) / forecast_variance;
      state += gain * error;
      cov -= gain * cov.row(0);
    }
    state = model.transition * state;
    cov = model.transition * cov * model.transition.transpose() + model.state_noise;
  }
  return log_likelihood;
}

// Parameters as the optimizer sees them: (unconstrained AR, unconstrained MA, sqrt(variance)).
struct Parameters {
  std::vector<double> ar, ma;
  double variance = 1.0;
};

Parameters constrain(const Eigen::VectorXd& free, int p, int q) {
  Parameters parameters;
  std::vector<double> ar(free.data(), free.data() + p), ma(free.data() + p, free.data() + p + q);
  if (p > 0) parameters.ar = constrain_stationary(ar);
  if (q > 0) {
    parameters.ma = constrain_stationary(ma);
    for (double& theta : parameters.ma) theta = -theta;
  }
  parameters.variance = free(p + q) * free(p + q);
  return parameters;
}

Eigen::VectorXd unconstrain(const Parameters& parameters) {
  const int p = static_cast<int>(parameters.ar.size()), q = static_cast<int>(parameters.ma.size());
  Eigen::VectorXd free(p + q + 1);
  const auto ar = unconstrain_stationary(parameters.ar);
  std::vector<double> negated(parameters.ma);
  for (double& theta : negated) theta = -theta;
  const auto ma = unconstrain_stationary(negated);
  LABPOSE_ASSERT(ar && ma);  // start values are checked first
  for (int i = 0; i < p; ++i) free(i) = (*ar)[static_cast<std::size_t>(i)];
  for (int j = 0; j < q; ++j) free(p + j) = (*ma)[static_cast<std::size_t>(j)];
  free(p + q) = std::sqrt(parameters.variance);
  return free;
}

// Least squares (minimum norm, as numpy's pinv) of y on the columns of x.
Eigen::VectorXd least_squares(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
  return x.completeOrthogonalDecomposition().solve(y);
}

// statsmodels' SARIMAX start values: conditional sum of squares on the finite samples (a long
// AR fit gives residuals, then the ARMA regression on lags of the data and of those residuals);
// coefficients that are not stationary (invertible) start at zero.
Parameters start_values(const std::vector<double>& series, int p, int q) {
  std::vector<double> data;
  for (const double value : series) {
    if (std::isfinite(value)) data.push_back(value);
  }
  const int n = static_cast<int>(data.size());
  const int long_lags = 2 * q, first = std::max(long_lags + q, p);
  Parameters start;
  start.ar.assign(static_cast<std::size_t>(p), 0.0);
  start.ma.assign(static_cast<std::size_t>(q), 0.0);
  double variance = kNaN;
  if (n - first > p + q) {
    std::vector<double> residuals;  // residuals[t - long_lags] at time t
    if (q > 0) {
      Eigen::MatrixXd x(n - long_lags, long_lags);
      Eigen::VectorXd y(n - long_lags);
      for (int t = long_lags; t < n; ++t) {
        y(t - long_lags) = data[static_cast<std::size_t>(t)];
        for (int lag = 1; lag <= long_lags; ++lag)
          x(t - long_lags, lag - 1) = data[static_cast<std::size_t>(t - lag)];
      }
      const Eigen::VectorXd residual = y - x * least_squares(x, y);
      residuals.assign(residual.data(), residual.data() + residual.size());
    }
    Eigen::MatrixXd x(n - first, p + q);
    Eigen::VectorXd y(n - first);
    for (int t = first; t < n; ++t) {
      y(t - first) = data[static_cast<std::size_t>(t)];
      for (int lag = 1; lag <= p; ++lag)
        x(t - first, lag - 1) = data[static_cast<std::size_t>(t - lag)];
      for (int lag = 1; lag <= q; ++lag)
        x(t - first, p + lag - 1) = residuals[static_cast<std::size_t>(t - lag - long_lags)];
    }
    const Eigen::VectorXd coefficients = least_squares(x, y);
    const Eigen::VectorXd residual = y - x * coefficients;
    const double average = residual.mean();
    variance = (residual.array() - average).square().mean();
    start.ar.assign(coefficients.data(), coefficients.data() + p);
    start.ma.assign(coefficients.data() + p, coefficients.data() + p + q);
  }
  if (!unconstrain_stationary(start.ar)) std::fill(start.ar.begin(), start.ar.end(), 0.0);
  std::vector<double> negated(start.ma);
  for (double& theta : negated) theta = -theta;
  if (!unconstrain_stationary(negated)) std::fill(start.ma.begin(), start.ma.end(), 0.0);
  start.variance = std::isfinite(variance) && variance > 0.0 ? variance : 1.0;
  return start;
}

// BFGS with central-difference gradients and a backtracking line search, minimizing `objective`.
template <class Objective>
Eigen::VectorXd minimize(const Objective& objective, Eigen::VectorXd x) {
  const Eigen::Index n = x.size();
  auto gradient_at = [&](const Eigen::VectorXd& at) {
    Eigen::VectorXd gradient(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const double step = 1e-6 * std::max(1.0, std::abs(at(i)));
      Eigen::VectorXd forward = at, backward = at;
      forward(i) += step;
      backward(i) -= step;
      gradient(i) = (objective(forward) - objective(backward)) / (2.0 * step);
    }
    return gradient;
  };
  double value = objective(x);
  if (!std::isfinite(value)) return x;
  Eigen::VectorXd gradient = gradient_at(x);
  Eigen::MatrixXd inverse_hessian = Eigen::MatrixXd::Identity(n, n);
  for (int iteration = 0; iteration < 300; ++iteration) {
    if (!gradient.allFinite() || gradient.lpNorm<Eigen::Infinity>() < 1e-7) break;
    Eigen::VectorXd direction = -inverse_hessian * gradient;
    if (direction.dot(gradient) >= 0.0) {  // not a descent direction: restart
      inverse_hessian.setIdentity();
      direction = -gradient;
    }
    // No step moves a transformed parameter by more than 1: the transforms saturate, and a long
    // first step would land where the gradient vanishes.
    double step = std::min(1.0, 1.0 / std::max(1e-300, direction.lpNorm<Eigen::Infinity>()));
    double next_value = kNaN;
    Eigen::VectorXd next;
    for (int halving = 0; halving < 60; ++halving, step *= 0.5) {
      next = x + step * direction;
      next_value = objective(next);
      if (std::isfinite(next_value) && next_value <= value + 1e-4 * step * direction.dot(gradient))
        break;
    }
    if (!std::isfinite(next_value) || next_value > value) break;
    const Eigen::VectorXd next_gradient = gradient_at(next);
    const Eigen::VectorXd s = next - x, y = next_gradient - gradient;
    const double sy = s.dot(y);
    const double improvement = value - next_value;
    x = next;
    gradient = next_gradient;
    value = next_value;
    if (sy > 1e-12) {
      if (iteration == 0) inverse_hessian *= sy / y.squaredNorm();  // Nocedal & Wright (6.20)
      const double rho = 1.0 / sy;
      const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(n, n);
      inverse_hessian = (identity - rho * s * y.transpose()) * inverse_hessian *
                            (identity - rho * y * s.transpose()) +
                        rho * s * s.transpose();
    }
    if (improvement < 1e-12 * std::max(1.0, std::abs(value))) break;
  }
  return x;
}

}  // namespace

std::vector<double> constrain_stationary(const std::vector<double>& unconstrained) {
  const std::size_t n = unconstrained.size();
  std::vector<std::vector<double>> y(n, std::vector<double>(n, 0.0));
  for (std::size_t k = 0; k < n; ++k) {
    const double partial = unconstrained[k] / std::sqrt(1.0 + unconstrained[k] * unconstrained[k]);
    for (std::size_t i = 0; i < k; ++i) y[k][i] = y[k - 1][i] + partial * y[k - 1][k - i - 1];
    y[k][k] = partial;
  }
  std::vector<double> coefficients(n);
  for (std::size_t i = 0; i < n; ++i) coefficients[i] = -y[n - 1][i];
  return coefficients;
}

std::optional<std::vector<double>> unconstrain_stationary(const std::vector<double>& coefficients) {
  const std::size_t n = coefficients.size();
  if (n == 0) return std::vector<double>{};
  std::vector<std::vector<double>> y(n, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < n; ++i) y[n - 1][i] = -coefficients[i];
  for (std::size_t k = n - 1; k > 0; --k) {
    const double denominator = 1.0 - y[k][k] * y[k][k];
    if (!(denominator > 0.0)) return std::nullopt;
    for (std::size_t i = 0; i < k; ++i)
      y[k - 1][i] = (y[k][i] - y[k][k] * y[k][k - i - 1]) / denominator;
  }
  std::vector<double> unconstrained(n);
  for (std::size_t k = 0; k < n; ++k) {
    const double partial = y[k][k];
    if (!(std::abs(partial) < 1.0)) return std::nullopt;
    unconstrained[k] = partial / std::sqrt(1.0 - partial * partial);
  }
  return unconstrained;
}

ArmaFit predict_arma(const std::vector<double>& series, const std::vector<double>& ar,
                     const std::vector<double>& ma, double variance, double alpha) {
  if (!(alpha > 0.0 && alpha < 1.0))
    throw UsageError("the confidence level alpha must be between 0 and 1 (exclusive)");
  ArmaFit fit;
  fit.ar = ar;
  fit.ma = ma;
  fit.variance = variance;
  const std::size_t n = series.size();
  fit.mean.assign(n, kNaN);
  std::vector<double> forecast_variance(n, kNaN);
  fit.log_likelihood =
      kalman_filter(series, state_space(ar, ma, variance), &fit.mean, &forecast_variance);
  const double z = normal_quantile_two_sided(alpha);
  fit.lower.resize(n);
  fit.upper.resize(n);
  for (std::size_t t = 0; t < n; ++t) {
    const double half_width = z * std::sqrt(forecast_variance[t]);
    fit.lower[t] = fit.mean[t] - half_width;
    fit.upper[t] = fit.mean[t] + half_width;
  }
  return fit;
}

std::optional<ArmaFit> fit_arma(const std::vector<double>& series, int ar_degree, int ma_degree,
                                double alpha) {
  if (ar_degree < 0 || ma_degree < 0) {
    throw UsageError("the ARMA degrees must not be negative",
                     "DeepLabCut's defaults are 3 (AR) and 1 (MA)");
  }
  const auto finite = std::count_if(series.begin(), series.end(),
                                    [](double value) { return std::isfinite(value); });
  if (finite <= 10) return std::nullopt;
  const double samples = static_cast<double>(series.size());
  const auto objective = [&](const Eigen::VectorXd& free) {
    const Parameters parameters = constrain(free, ar_degree, ma_degree);
    if (!(parameters.variance > 0.0)) return std::numeric_limits<double>::infinity();
    const double log_likelihood = kalman_filter(
        series, state_space(parameters.ar, parameters.ma, parameters.variance), nullptr, nullptr);
    return -log_likelihood / samples;
  };
  // The likelihood of tracks (nearly integrated series) has several optima: start from
  // statsmodels' values and from a near random walk, keep the better fit.
  const Parameters css = start_values(series, ar_degree, ma_degree);
  std::vector<Eigen::VectorXd> starts = {unconstrain(css)};
  if (ar_degree > 0) {
    Parameters walk = css;
    std::fill(walk.ar.begin(), walk.ar.end(), 0.0);
    std::fill(walk.ma.begin(), walk.ma.end(), 0.0);
    walk.ar[0] = 0.95;
    starts.push_back(unconstrain(walk));
  }
  Eigen::VectorXd best;
  double best_value = std::numeric_limits<double>::infinity();
  for (const Eigen::VectorXd& start : starts) {
    const Eigen::VectorXd found = minimize(objective, start);
    const double value = objective(found);
    if (best.size() == 0 || value < best_value) {
      best = found;
      best_value = value;
    }
  }
  const Parameters parameters = constrain(best, ar_degree, ma_degree);
  return predict_arma(series, parameters.ar, parameters.ma, parameters.variance, alpha);
}

}  // namespace labpose::pipeline

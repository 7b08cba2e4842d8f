// A linear Kalman filter with filterpy's update (Joseph form), the filter inside DeepLabCut's SORT
// trackers. Small dense matrices held row-major; not a general linear-algebra type.
#pragma once

#include <cstddef>
#include <vector>

namespace labpose::pipeline {

class KalmanFilter {
 public:
  /// A filter with state size n and measurement size m; F, P, Q = identity (n x n), H = the first m
  /// state entries, R = identity (m x m), x = 0, as filterpy's KalmanFilter starts.
  KalmanFilter(std::size_t state_size, std::size_t measurement_size);

  /// x = F x, P = F P F^T + Q.
  void predict();
  /// Corrects the state with the measurement z (m values).
  void update(const std::vector<double>& z);

  std::size_t state_size() const { return n_; }
  std::size_t measurement_size() const { return m_; }
  std::vector<double>& state() { return x_; }
  const std::vector<double>& state() const { return x_; }
  /// Row-major matrices to set up the model: F (n x n), H (m x n), P, Q (n x n), R (m x m).
  std::vector<double>& transition() { return f_; }
  std::vector<double>& observation() { return h_; }
  std::vector<double>& state_covariance() { return p_; }
  std::vector<double>& process_noise() { return q_; }
  std::vector<double>& measurement_noise() { return r_; }

 private:
  std::size_t n_, m_;
  std::vector<double> x_, f_, h_, p_, q_, r_;
};

}  // namespace labpose::pipeline

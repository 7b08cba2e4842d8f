// The Kalman filter's two steps on Eigen maps of its row-major matrices.
#include "pipeline/tracking/kalman.hpp"

#include <Eigen/Dense>

namespace labpose::pipeline {
namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<Matrix>;
using VectorMap = Eigen::Map<Eigen::VectorXd>;

std::vector<double> identity(std::size_t size) {
  std::vector<double> values(size * size, 0.0);
  for (std::size_t i = 0; i < size; ++i) values[i * size + i] = 1.0;
  return values;
}

Eigen::Index index(std::size_t value) {
  return static_cast<Eigen::Index>(value);
}

}  // namespace

KalmanFilter::KalmanFilter(std::size_t state_size, std::size_t measurement_size)
    : n_(state_size),
      m_(measurement_size),
      x_(state_size, 0.0),
      f_(identity(state_size)),
      h_(measurement_size * state_size, 0.0),
      p_(identity(state_size)),
      q_(identity(state_size)),
      r_(identity(measurement_size)) {
  for (std::size_t i = 0; i < m_ && i < n_; ++i) h_[i * n_ + i] = 1.0;
}

void KalmanFilter::predict() {
  const auto n = index(n_);
  MatrixMap f(f_.data(), n, n), p(p_.data(), n, n), q(q_.data(), n, n);
  VectorMap x(x_.data(), n);
  const Eigen::VectorXd predicted = f * x;
  x = predicted;
  const Matrix covariance = f * p * f.transpose() + q;
  p = covariance;
}

void KalmanFilter::update(const std::vector<double>& z) {
  const auto n = index(n_), m = index(m_);
  MatrixMap h(h_.data(), m, n), p(p_.data(), n, n), r(r_.data(), m, m);
  VectorMap x(x_.data(), n);
  const Eigen::Map<const Eigen::VectorXd> measured(z.data(), m);
  const Eigen::VectorXd residual = measured - h * x;
  const Matrix pht = p * h.transpose();
  const Matrix innovation = h * pht + r;
  const Matrix gain = pht * innovation.inverse();
  x += gain * residual;
  const Matrix i_kh = Matrix::Identity(n, n) - gain * h;
  const Matrix covariance = i_kh * p * i_kh.transpose() + gain * r * gain.transpose();
  p = covariance;
}

}  // namespace labpose::pipeline

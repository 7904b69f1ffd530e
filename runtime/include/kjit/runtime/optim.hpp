// kjit/runtime/optim.hpp — Warp's optimizers (wp.optim.SGD, wp.optim.Adam): parameter updates
// as kjit kernels over arrays on any device, with Warp's update rules and rounding.
#pragma once

#include <cstdint>
#include <vector>

#include "kjit/runtime/ndarray.hpp"

namespace kjit::optim {

/// Stochastic gradient descent with momentum, dampening, weight decay and Nesterov momentum,
/// as wp.optim.SGD (and torch.optim.SGD): per component, g += weight_decay * p; with
/// momentum, b = g on the first step, then b = momentum * b + (1 - dampening) * g, and
/// g = nesterov ? g + momentum * b : b; then p -= lr * g.
///
/// Parameters are contiguous arrays of float32 or float64 scalars, vectors, matrices,
/// quaternions or transforms (updated component by component: float32 ones in float32
/// arithmetic, as Warp does); the coefficients round to the parameters' precision.
class SGD {
 public:
  SGD(std::vector<NdArray> params, double lr = 0.001, double momentum = 0, double dampening = 0,
      double weight_decay = 0, bool nesterov = false);
  /// One update with `grads` (one per parameter, of its element type and shape).
  void step(const std::vector<NdArray>& grads);
  /// One update with each parameter's own gradient buffer (NdArray::grad).
  void step();
  /// Clears the momentum buffers and the step count.
  void reset_internal_state();
  /// Replaces the parameters (new momentum buffers where shapes or types changed).
  void set_params(std::vector<NdArray> params);
  const std::vector<NdArray>& params() const { return params_; }

  double lr, momentum, dampening, weight_decay;
  bool nesterov;
  /// Steps taken so far.
  int64_t t = 0;

 private:
  std::vector<NdArray> params_, momentum_buffers_;
};

/// Adam (Kingma & Ba), as wp.optim.Adam: per component, m = beta1 m + (1 - beta1) g,
/// v = beta2 v + (1 - beta2) g^2, p -= lr * m_hat / (sqrt(v_hat) + eps) with the bias-corrected
/// m_hat = m / (1 - beta1^(t+1)) and v_hat likewise. Parameters as SGD's; for float32 the
/// arithmetic is Warp's operation for operation (its float kernel for scalars, its vec3 kernel —
/// another rounding order — for vectors and the other composite types), so a port takes
/// Warp's steps bit for bit on the cpu.
class Adam {
 public:
  Adam(std::vector<NdArray> params, double lr = 0.001, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8);
  void step(const std::vector<NdArray>& grads);
  void step();
  /// Clears the moments and the step count.
  void reset_internal_state();
  void set_params(std::vector<NdArray> params);
  const std::vector<NdArray>& params() const { return params_; }

  double lr, beta1, beta2, eps;
  int64_t t = 0;

 private:
  std::vector<NdArray> params_, m_, v_;
};

}  // namespace kjit::optim

// kjit::optim's SGD and Adam: the update kernels (Warp's rules, component by component over a
// flat view of each parameter) and the classes that keep their state.
#include "kjit/runtime/optim.hpp"

#include <string>

#include "kjit/dsl.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/launch.hpp"

namespace kjit::optim {

namespace kernels {
KJIT_MODULE(kjit_optim)
using namespace kjit::dsl;

// One update kernel per precision; `t`, `momentum` and the flags are values, so one build
// serves every setting. Names and operation order follow Warp's kernels (warp/optim).
#define KJIT_OPTIM_SGD(NAME, Real)                                                                  \
  KJIT_KERNEL(NAME, (Array<Real> g, Array<Real> b, Real lr, Real momentum, Real damping,            \
                     Real weight_decay, Int nesterov, Int t, Array<Real> params)) {                  \
    Int i = tid();                                                                                  \
    Var<Real> gt = g[i];                                                                            \
    If(weight_decay != Real(0), [&] { gt += weight_decay * params[i]; });                           \
    If(momentum != Real(0), [&] {                                                                   \
      Var<Real> bt = b[i];                                                                          \
      If(t > 0, [&] { bt = momentum * bt + (Real(1) - damping) * gt; }).Else([&] { bt = gt; });     \
      If(nesterov == 1, [&] { gt += momentum * bt; }).Else([&] { gt = bt; });                       \
      b[i] = bt;                                                                                    \
    });                                                                                             \
    params[i] = params[i] - lr * gt;                                                                \
  }

// `vector_form`: Warp's vec3 kernel, whose squares, quotient and step round in another order
// than its float kernel's.
#define KJIT_OPTIM_ADAM(NAME, Real)                                                                 \
  KJIT_KERNEL(NAME, (Array<Real> g, Array<Real> m, Array<Real> v, Real lr, Real beta1, Real beta2,  \
                     Real t, Real eps, Int vector_form, Array<Real> params)) {                      \
    Int i = tid();                                                                                  \
    Real gi = g[i];                                                                                 \
    Real mi = beta1 * m[i] + (Real(1) - beta1) * gi;                                                \
    Var<Real> vi = beta2 * v[i];                                                                    \
    If(vector_form == 1, [&] { vi += (Real(1) - beta2) * (gi * gi); })                              \
        .Else([&] { vi += (Real(1) - beta2) * gi * gi; });                                          \
    m[i] = mi;                                                                                      \
    v[i] = vi;                                                                                      \
    Real mhat = mi / (Real(1) - pow(beta1, t + Real(1)));                                           \
    Real vhat = Real(vi) / (Real(1) - pow(beta2, t + Real(1)));                                     \
    Real denom = sqrt(vhat) + eps;                                                                  \
    Var<Real> p = params[i];                                                                        \
    If(vector_form == 1, [&] { p = p - lr * (mhat / denom); }).Else([&] { p = p - lr * mhat / denom; }); \
    params[i] = p;                                                                                  \
  }

KJIT_OPTIM_SGD(sgd_f32, Float)
KJIT_OPTIM_SGD(sgd_f64, Double)
KJIT_OPTIM_ADAM(adam_f32, Float)
KJIT_OPTIM_ADAM(adam_f64, Double)
#undef KJIT_OPTIM_SGD
#undef KJIT_OPTIM_ADAM
}  // namespace kernels

namespace {

bool is_double(const NdArray& a) { return a.element().scalar == ir::Scalar::F64; }

/// A parameter (or its gradient or state) as a flat array of its components.
NdArray components(const NdArray& a) {
  ir::Type scalar = ir::Type::scalar_of(a.element().scalar);
  return NdArray::view(a.data(), scalar, {a.size() * a.element().lanes()}, a.device());
}

void check_params(const char* who, const std::vector<NdArray>& params) {
  for (size_t k = 0; k < params.size(); ++k) {
    const NdArray& p = params[k];
    std::string name = std::string(who) + ": parameter " + std::to_string(k);
    if (!p.defined()) throw Error(ErrorKind::User, name + " is an empty handle");
    if ((p.element().scalar != ir::Scalar::F32 && p.element().scalar != ir::Scalar::F64) || p.element().lanes() < 1)
      throw Error(ErrorKind::User, name + " holds " + p.element().str() +
                                       "; optimizers update float32 and float64 scalars, vectors and matrices");
    if (!p.is_contiguous()) throw Error(ErrorKind::User, name + " is not contiguous");
  }
}

/// Keeps `state[k]` a zeroed array like `params[k]` (kept where it still fits).
void fit_state(std::vector<NdArray>& state, const std::vector<NdArray>& params) {
  state.resize(params.size());
  for (size_t k = 0; k < params.size(); ++k) {
    const NdArray& p = params[k];
    NdArray& s = state[k];
    if (!s.defined() || s.element() != p.element() || !s.same_shape(p)) s = NdArray::zeros(p.element(), p.shape(), p.device());
    else if (s.device() != p.device()) s = s.to(p.device());
  }
}

std::vector<NdArray> own_grads(const char* who, const std::vector<NdArray>& params) {
  std::vector<NdArray> grads;
  for (size_t k = 0; k < params.size(); ++k) {
    if (!params[k].has_grad())
      throw Error(ErrorKind::User, std::string(who) + "::step(): parameter " + std::to_string(k) +
                                       " has no gradient buffer (requires_grad), and no gradient was given");
    grads.push_back(params[k].grad());
  }
  return grads;
}

void check_grads(const char* who, const std::vector<NdArray>& params, const std::vector<NdArray>& grads) {
  if (grads.size() != params.size())
    throw Error(ErrorKind::User, std::string(who) + "::step: " + std::to_string(grads.size()) + " gradients for " +
                                     std::to_string(params.size()) + " parameters");
  for (size_t k = 0; k < params.size(); ++k) {
    const NdArray& g = grads[k];
    if (!g.defined() || g.element() != params[k].element() || !g.same_shape(params[k]) || !g.is_contiguous() ||
        g.device() != params[k].device())
      throw Error(ErrorKind::User, std::string(who) + "::step: gradient " + std::to_string(k) +
                                       " must be a contiguous array of its parameter's element type (" +
                                       params[k].element().str() + "), shape and device");
  }
}

}  // namespace

SGD::SGD(std::vector<NdArray> params, double lr, double momentum, double dampening, double weight_decay, bool nesterov)
    : lr(lr), momentum(momentum), dampening(dampening), weight_decay(weight_decay), nesterov(nesterov) {
  set_params(std::move(params));
}

void SGD::set_params(std::vector<NdArray> params) {
  check_params("SGD", params);
  params_ = std::move(params);
  fit_state(momentum_buffers_, params_);
}

void SGD::step() { step(own_grads("SGD", params_)); }

void SGD::step(const std::vector<NdArray>& grads) {
  check_grads("SGD", params_, grads);
  for (size_t k = 0; k < params_.size(); ++k) {
    NdArray p = components(params_[k]), g = components(grads[k]), b = components(momentum_buffers_[k]);
    const int nest = nesterov ? 1 : 0, steps = t > 0 ? 1 : 0;
    if (is_double(p))
      launch(kernels::sgd_f64, p.size(), g, b, lr, momentum, dampening, weight_decay, nest, steps, p);
    else
      launch(kernels::sgd_f32, p.size(), g, b, float(lr), float(momentum), float(dampening), float(weight_decay),
             nest, steps, p);
  }
  ++t;
}

void SGD::reset_internal_state() {
  for (NdArray& b : momentum_buffers_) b.zero();
  t = 0;
}

Adam::Adam(std::vector<NdArray> params, double lr, double beta1, double beta2, double eps)
    : lr(lr), beta1(beta1), beta2(beta2), eps(eps) {
  set_params(std::move(params));
}

void Adam::set_params(std::vector<NdArray> params) {
  check_params("Adam", params);
  params_ = std::move(params);
  fit_state(m_, params_);
  fit_state(v_, params_);
}

void Adam::step() { step(own_grads("Adam", params_)); }

void Adam::step(const std::vector<NdArray>& grads) {
  check_grads("Adam", params_, grads);
  for (size_t k = 0; k < params_.size(); ++k) {
    NdArray p = components(params_[k]), g = components(grads[k]), m = components(m_[k]), v = components(v_[k]);
    const int vector_form = params_[k].element().lanes() > 1 ? 1 : 0;
    if (is_double(p))
      launch(kernels::adam_f64, p.size(), g, m, v, lr, beta1, beta2, double(t), eps, vector_form, p);
    else
      launch(kernels::adam_f32, p.size(), g, m, v, float(lr), float(beta1), float(beta2), float(t), float(eps),
             vector_form, p);
  }
  ++t;
}

void Adam::reset_internal_state() {
  for (NdArray& m : m_) m.zero();
  for (NdArray& v : v_) v.zero();
  t = 0;
}

}  // namespace kjit::optim

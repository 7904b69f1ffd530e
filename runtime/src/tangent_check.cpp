// The forward-mode half of check_gradients: tangents against finite differences along a
// direction, and against the adjoint through the dot-product identity.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "gradcheck_run.hpp"
#include "kjit/ir/ir.hpp"
#include "kjit/kernel.hpp"

namespace kjit::detail {

namespace {

/// One input: an array (its host copy is perturbed) or a value (its launch argument is).
struct Input {
  size_t param;
  bool array;
  ir::Type element;
  std::vector<double> value;  ///< a value's components
};

}  // namespace

void check_tangents(GradCheckRun& run, const std::vector<NdArray>& grads, GradCheckReport& report) {
  const KernelDef& kernel = run.kernel;
  try {
    tangent_of(kernel);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::User) throw;
    report.tangent_error = e.what();
    return;
  }
  const auto& params = kernel.params();
  const GradCheckOptions& o = run.options;
  const Device cpu = Device::cpu();
  std::vector<Input> inputs;
  for (size_t p = 0; p < params.size(); ++p) {
    const ir::Type& t = params[p].type;
    bool named = std::find(o.inputs.begin(), o.inputs.end(), params[p].name) != o.inputs.end();
    if (!o.inputs.empty() && !named) continue;
    if (t.is_array()) {
      if (run.args[p].is_array() && run.read.count(p) && !run.written.count(p) && checkable(run.host[p].element()))
        inputs.push_back(Input{p, true, t.element(), {}});
    } else {
      if (!run.values[p].empty()) inputs.push_back(Input{p, false, t, run.values[p]});
    }
  }

  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (const Input& in : inputs) {
    const size_t p = in.param;
    const int lanes = in.element.lanes();
    // The direction v, on the host, and its magnitude scale.
    NdArray direction;
    std::vector<double> value_direction;
    double magnitude = 0;
    if (in.array) {
      direction = NdArray::empty(in.element, run.host[p].shape(), cpu);
      for (int64_t e = 0; e < direction.size(); ++e)
        for (int c = 0; c < lanes; ++c) {
          set_component(direction, e, c, unit(run.rng));
          magnitude = std::max(magnitude, std::fabs(component(run.host[p], e, c)));
        }
    } else {
      for (double x : in.value) {
        value_direction.push_back(unit(run.rng));
        magnitude = std::max(magnitude, std::fabs(x));
      }
    }

    // J v: one tangent launch from the unperturbed inputs, outputs at their initial contents.
    std::vector<LaunchArg> tangents(params.size());
    std::vector<NdArray> jv(params.size());
    for (size_t i = 0; i < params.size(); ++i)
      if (run.args[i].is_array() && !run.written.count(i)) run.dev[i].copy_from(run.host[i]);
    for (size_t q : run.outputs) {
      run.dev[q].copy_from(run.initial[q]);
      jv[q] = NdArray::zeros(run.host[q].element(), run.host[q].shape(), o.device);
      tangents[q] = jv[q];
    }
    tangents[p] = in.array ? LaunchArg(direction.to(o.device)) : value_of(in.element, value_direction);
    launch_tangent(kernel, run.dims, run.launch_args, tangents, LaunchOptions{o.device, Stream(), 0});
    for (size_t q : run.outputs) jv[q] = jv[q].to(cpu);

    // The central difference of the outputs along v (Richardson-extrapolated like the adjoint's).
    auto move = [&](double h) {
      if (in.array) {
        for (int64_t e = 0; e < direction.size(); ++e)
          for (int c = 0; c < lanes; ++c)
            set_component(run.host[p], e, c, component(run.host[p], e, c) + h * component(direction, e, c));
      } else {
        std::vector<double> moved = in.value;
        for (size_t c = 0; c < moved.size(); ++c) moved[c] += h * value_direction[c];
        run.launch_args[p] = value_of(in.element, moved);
      }
    };
    const NdArray original = in.array ? run.host[p].copy() : NdArray();
    auto restore = [&] {
      if (in.array) run.host[p].copy_from(original);
      else run.launch_args[p] = run.args[p];
    };
    auto central = [&](double h) {
      move(h);
      auto plus = run.forward();
      restore();
      move(-h);
      auto minus = run.forward();
      restore();
      std::vector<std::vector<double>> out(params.size());
      for (size_t q : run.outputs) {
        const int ol = run.host[q].element().lanes();
        for (int64_t k = 0; k < run.host[q].size(); ++k)
          for (int c = 0; c < ol; ++c) out[q].push_back((component(plus[q], k, c) - component(minus[q], k, c)) / (2 * h));
      }
      return out;
    };
    auto estimate = [&](double h) {  // Richardson-extrapolated like the adjoint's
      auto numeric = central(h);
      if (o.richardson) {
        auto half = central(h / 2);
        for (size_t q : run.outputs)
          for (size_t k = 0; k < numeric[q].size(); ++k) numeric[q][k] = (4.0 * half[q][k] - numeric[q][k]) / 3.0;
      }
      return numeric;
    };
    // The tolerances of the less precise of the input and the output: a float32 input's
    // steps are rounded to float32 even when the kernel computes in float64.
    auto rtol = [&](size_t q) { return std::max(rtol_for(run.options, in.element), rtol_for(run.options, run.host[q].element())); };
    auto atol = [&](size_t q) { return std::max(atol_for(run.options, in.element), atol_for(run.options, run.host[q].element())); };
    auto passes = [&](size_t q, int64_t k, int c, double numeric) {
      double t = component(jv[q], k, c);
      return std::fabs(t - numeric) <= atol(q) + rtol(q) * std::max(std::fabs(t), std::fabs(numeric));
    };
    // A step along v moves every component of the input at once, so it can cross a jump
    // that steps along single components miss (atan2's cut near one of them, in float32):
    // components that fail are measured again with steps 4 and 16 times smaller, and pass
    // when one of them agrees. A wrong tangent agrees with none.
    const double h = step_for(run.options, in.element, magnitude);
    auto numeric = estimate(h);
    for (double shrink : {4.0, 16.0}) {
      bool all = true;
      for (size_t q : run.outputs) {
        const int ol = run.host[q].element().lanes();
        for (int64_t k = 0; k < run.host[q].size(); ++k)
          for (int c = 0; c < ol; ++c) all = all && passes(q, k, c, numeric[q][size_t(k * ol + c)]);
      }
      if (all) break;
      auto finer = estimate(h / shrink);
      for (size_t q : run.outputs) {
        const int ol = run.host[q].element().lanes();
        for (int64_t k = 0; k < run.host[q].size(); ++k)
          for (int c = 0; c < ol; ++c) {
            double& x = numeric[q][size_t(k * ol + c)];
            if (!passes(q, k, c, x)) x = finer[q][size_t(k * ol + c)];
          }
      }
    }
    for (size_t q : run.outputs) {
      const int ol = run.host[q].element().lanes();
      GradCheckParam row;
      row.name = params[p].name + " -> " + params[q].name;
      row.check = "tangent";
      double worst = -1;
      for (int64_t k = 0; k < run.host[q].size(); ++k)
        for (int c = 0; c < ol; ++c)
          compare(row, component(jv[q], k, c), numeric[q][size_t(k * ol + c)], rtol(q), atol(q), k, c, worst);
      report.tangents.push_back(row);
    }

    // <J v, w> against <v, J^T w>.
    if (!o.dot_product || !grads[p].defined()) continue;
    double jvw = 0, vjw = 0, scale = 0;
    for (size_t q : run.outputs) {
      const int ol = run.host[q].element().lanes();
      for (int64_t k = 0; k < run.host[q].size(); ++k)
        for (int c = 0; c < ol; ++c) {
          double t = component(run.weights[q], k, c) * component(jv[q], k, c);
          jvw += t;
          scale += std::fabs(t);
        }
    }
    // A value's J^T w is its one-element gradient (the sum over threads).
    for (int64_t e = 0; e < (in.array ? direction.size() : 1); ++e)
      for (int c = 0; c < lanes; ++c) {
        double v = in.array ? component(direction, e, c) : value_direction[size_t(c)];
        double t = v * component(grads[p], e, c);
        vjw += t;
        scale += std::fabs(t);
      }
    GradCheckParam row;
    row.name = params[p].name;
    row.check = "dot";
    const double dot_rtol = o.dot_rtol >= 0 ? o.dot_rtol : (in.element.scalar == ir::Scalar::F64 ? 1e-10 : 1e-4);
    row.checked = 1;
    row.max_abs_error = std::fabs(jvw - vjw);
    row.max_rel_error = scale > 0 ? row.max_abs_error / scale : 0;
    row.worst_index = 0;
    row.worst_adjoint = jvw;
    row.worst_numeric = vjw;
    row.passed = row.max_abs_error <= dot_rtol * scale;  // false for a NaN
    report.tangents.push_back(row);
  }
}

}  // namespace kjit::detail

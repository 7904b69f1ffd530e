// Finite-difference gradient checks of kernels' adjoints (and, in tangent_check.cpp, of
// their tangents).
#include "kjit/runtime/gradcheck.hpp"

#include "array_uses.hpp"
#include "gradcheck_run.hpp"
#include "kjit/ir/ir.hpp"
#include "kjit/kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <map>
#include <set>
#include <string>

namespace kjit {

namespace detail {

double component(const NdArray& a, int64_t i, int c) {
  const char* p = static_cast<const char*>(a.data()) + size_t(i) * a.element_bytes();
  if (a.element().scalar == ir::Scalar::F64) return reinterpret_cast<const double*>(p)[c];
  return reinterpret_cast<const float*>(p)[c];
}
void set_component(NdArray& a, int64_t i, int c, double v) {
  char* p = static_cast<char*>(a.data()) + size_t(i) * a.element_bytes();
  if (a.element().scalar == ir::Scalar::F64) reinterpret_cast<double*>(p)[c] = v;
  else reinterpret_cast<float*>(p)[c] = float(v);
}
bool checkable(const ir::Type& element) {
  return (element.scalar == ir::Scalar::F32 || element.scalar == ir::Scalar::F64) && element.lanes() > 0;
}

/// Component `c` of a value argument as a double (any scalar kind of the right layout).
double value_component(const LaunchArg& a, int c) {
  const auto* p = static_cast<const unsigned char*>(a.bytes());
  switch (a.type().scalar) {
    case ir::Scalar::F64: { double v; std::memcpy(&v, p + 8 * c, 8); return v; }
    case ir::Scalar::F32: { float v; std::memcpy(&v, p + 4 * c, 4); return v; }
    case ir::Scalar::I32: { int32_t v; std::memcpy(&v, p + 4 * c, 4); return v; }
    case ir::Scalar::I64: { int64_t v; std::memcpy(&v, p + 8 * c, 8); return double(v); }
    case ir::Scalar::Bool: case ir::Scalar::I8: case ir::Scalar::U8: case ir::Scalar::I16: case ir::Scalar::U16:
    case ir::Scalar::U32: case ir::Scalar::U64: case ir::Scalar::F16: case ir::Scalar::BF16: break;
  }
  throw Error(ErrorKind::User, "check_gradients: cannot read a " + a.type().str() + " value as a real number");
}

LaunchArg value_of(const ir::Type& t, const std::vector<double>& comps) {
  unsigned char bytes[LaunchArg::kMaxValueBytes] = {};
  for (size_t c = 0; c < comps.size(); ++c) {
    if (t.scalar == ir::Scalar::F64) std::memcpy(bytes + 8 * c, &comps[c], 8);
    else { float f = float(comps[c]); std::memcpy(bytes + 4 * c, &f, 4); }
  }
  return LaunchArg::from_bytes(t, bytes);
}

GradCheckRun::GradCheckRun(const KernelDef& k, const Dims& d, const std::vector<LaunchArg>& a,
                           const GradCheckOptions& o)
    : kernel(k), dims(d), args(a), options(o), rng(o.seed) {
  const ir::Function& fn = kernel.ir();
  const auto& params = kernel.params();
  if (args.size() != params.size())
    throw Error(ErrorKind::User, "check_gradients of kernel '" + kernel.name() + "': expected " +
                                     std::to_string(params.size()) + " arguments, got " + std::to_string(args.size()));
  // Which arrays the kernel reads and which it writes (itself or in the device functions it
  // passes them to); which parameters it uses at all (values).
  array_uses(fn, read, written);
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::Param) used.insert(s.param());
  });

  // Host copies (perturbed in place) and device copies (launched); values as their
  // components, perturbed in launch_args.
  const Device cpu = Device::cpu();
  host.resize(args.size());
  dev.resize(args.size());
  values.resize(args.size());
  launch_args = args;
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::Type& t = params[i].type;
    if (!args[i].is_array()) {
      if (!t.is_array() && checkable(t) && !args[i].absent() && !args[i].destination())
        for (int c = 0; c < t.lanes(); ++c) values[i].push_back(value_component(args[i], c));
      continue;
    }
    host[i] = args[i].array().to(cpu);
    dev[i] = args[i].array().to(options.device);
    launch_args[i] = dev[i];
  }
  for (size_t p : written)
    if (args[p].is_array() && checkable(host[p].element())) outputs.push_back(p);
  if (outputs.empty())
    throw Error(ErrorKind::User, "check_gradients of kernel '" + kernel.name() + "': it writes no floating array");

  // Output weights (the seed of the adjoint) and the outputs' initial contents.
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  weights.resize(args.size());
  initial.resize(args.size());
  for (size_t p : outputs) {
    initial[p] = host[p].copy();
    weights[p] = NdArray::empty(host[p].element(), host[p].shape(), cpu);
    int lanes = host[p].element().lanes();
    for (int64_t e = 0; e < host[p].size(); ++e)
      for (int c = 0; c < lanes; ++c) set_component(weights[p], e, c, unit(rng));
  }
}

std::vector<NdArray> GradCheckRun::forward() {
  std::vector<NdArray> out(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].is_array() && !written.count(i)) dev[i].copy_from(host[i]);
  for (size_t p : outputs) dev[p].copy_from(initial[p]);
  launch(kernel, dims, launch_args, LaunchOptions{options.device, Stream(), 0});
  for (size_t p : outputs) out[p] = dev[p].to(Device::cpu());
  return out;
}

std::vector<int64_t> sample_elements(int64_t count, int max_elements, std::mt19937_64& rng) {
  std::vector<int64_t> elements(static_cast<size_t>(count));
  for (size_t e = 0; e < elements.size(); ++e) elements[e] = int64_t(e);
  if (int64_t(elements.size()) > max_elements) {
    std::shuffle(elements.begin(), elements.end(), rng);
    elements.resize(size_t(std::max(0, max_elements)));
    std::sort(elements.begin(), elements.end());
  }
  return elements;
}

double rtol_for(const GradCheckOptions& options, const ir::Type& element) {
  return options.rtol >= 0 ? options.rtol : (element.scalar == ir::Scalar::F64 ? 1e-6 : 2e-2);
}
double atol_for(const GradCheckOptions& options, const ir::Type& element) {
  return options.atol >= 0 ? options.atol : (element.scalar == ir::Scalar::F64 ? 1e-9 : 1e-3);
}
double step_for(const GradCheckOptions& options, const ir::Type& element, double magnitude) {
  bool f64 = element.scalar == ir::Scalar::F64;
  double eps = f64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  double rel_step = options.step > 0 ? options.step : std::cbrt(eps);
  return rel_step * std::max(1.0, magnitude);
}

void compare(GradCheckParam& r, double derivative, double numeric, double rtol, double atol, int64_t index,
             int component, double& worst_score) {
  double abs_err = std::fabs(numeric - derivative);
  double scale = std::max(std::fabs(numeric), std::fabs(derivative));
  double rel_err = scale > 0 ? abs_err / scale : 0;
  ++r.checked;
  r.max_abs_error = std::max(r.max_abs_error, abs_err);
  r.max_rel_error = std::max(r.max_rel_error, rel_err);
  bool ok = abs_err <= atol + rtol * scale;  // false for a NaN on either side
  double score = ok ? abs_err / (atol + rtol * scale) : std::numeric_limits<double>::infinity();
  if (score > worst_score || r.worst_index < 0) {
    worst_score = score;
    r.worst_index = index;
    r.worst_component = component;
    r.worst_adjoint = derivative;
    r.worst_numeric = numeric;
  }
  r.passed = r.passed && ok;
}

}  // namespace detail

bool GradCheckReport::passed() const {
  auto ok = [](const GradCheckParam& p) { return p.passed; };
  return std::all_of(params.begin(), params.end(), ok) && std::all_of(tangents.begin(), tangents.end(), ok);
}

std::string GradCheckReport::str() const {
  std::string out = "parameter        check     checked   max abs err   max rel err   worst index   derivative     numeric        verdict\n";
  char line[320];
  auto row = [&](const GradCheckParam& p) {
    std::snprintf(line, sizeof line, "%-16s %-9s %7lld   %11.3e   %11.3e   %7lld.%d   %13.6e  %13.6e  %s\n",
                  p.name.c_str(), p.check.c_str(), (long long)p.checked, p.max_abs_error, p.max_rel_error,
                  (long long)p.worst_index, p.worst_component, p.worst_adjoint, p.worst_numeric,
                  p.passed ? "ok" : "FAILED");
    out += line;
  };
  for (const GradCheckParam& p : params) row(p);
  for (const GradCheckParam& p : tangents) row(p);
  if (!tangent_error.empty()) out += "forward mode not checked: " + tangent_error + "\n";
  return out;
}

GradCheckReport check_gradients(const KernelDef& kernel, const Dims& dims,
                                const std::vector<LaunchArg>& args, const GradCheckOptions& options) {
  detail::GradCheckRun run(kernel, dims, args, options);
  const auto& params = kernel.params();
  const std::vector<NdArray>& host = run.host;
  const Device cpu = Device::cpu();

  // Inputs: floating arrays the kernel reads and does not write, and floating values it uses.
  auto is_value = [&](size_t p) { return !params[p].type.is_array(); };
  auto floating = [&](size_t p) {
    return is_value(p) ? !run.values[p].empty() : args[p].is_array() && detail::checkable(host[p].element());
  };
  std::vector<size_t> inputs;
  for (size_t p = 0; p < params.size(); ++p) {
    bool named = std::find(options.inputs.begin(), options.inputs.end(), params[p].name) != options.inputs.end();
    bool chosen = options.inputs.empty()
                      ? floating(p) && (is_value(p) ? run.used.count(p) != 0 : run.read.count(p) && !run.written.count(p))
                      : named;
    if (!chosen) continue;
    if (!floating(p))
      throw Error(ErrorKind::User, "check_gradients of kernel '" + kernel.name() + "': parameter '" + params[p].name +
                                       "' is neither a floating array nor a float32/float64 value");
    inputs.push_back(p);
  }

  // The adjoint, seeded with the weights (the dot-product check of the tangents needs it too).
  GradCheckReport report;
  // A value's gradient goes to a one-element array.
  std::vector<NdArray> grads(args.size());
  if (options.adjoint || (options.tangents && options.dot_product)) {
    std::vector<LaunchArg> adj(args.size());
    for (size_t p : inputs) {
      grads[p] = is_value(p) ? NdArray::zeros(params[p].type, {1}, options.device)
                             : NdArray::zeros(host[p].element(), host[p].shape(), options.device);
      adj[p] = grads[p];
    }
    for (size_t p : run.outputs) adj[p] = run.weights[p].to(options.device);
    run.forward();
    launch_adjoint(kernel, dims, run.launch_args, adj, LaunchOptions{options.device, Stream(), 0});
    for (size_t p : inputs) grads[p] = grads[p].to(cpu);
  }

  for (size_t p : options.adjoint ? inputs : std::vector<size_t>{}) {
    const NdArray& g = grads[p];
    const ir::Type element = is_value(p) ? params[p].type : host[p].element();
    const bool f64 = element.scalar == ir::Scalar::F64;
    GradCheckParam r;
    r.name = params[p].name;
    std::vector<int64_t> elements = detail::sample_elements(is_value(p) ? 1 : host[p].size(), options.max_elements, run.rng);
    // Component c of element e of the input, read and written where the launch sees it.
    auto get_input = [&](int64_t e, int c) {
      return is_value(p) ? run.values[p][size_t(c)] : detail::component(run.host[p], e, c);
    };
    auto set_input = [&](int64_t e, int c, double v) {
      if (!is_value(p)) return detail::set_component(run.host[p], e, c, v);
      run.values[p][size_t(c)] = f64 ? v : double(float(v));
      run.launch_args[p] = detail::value_of(element, run.values[p]);
    };
    // Outputs are differenced one by one, weighted and summed, so no large sums cancel.
    auto difference = [&](const std::vector<NdArray>& plus, const std::vector<NdArray>& minus) {
      double diff = 0;
      for (size_t o : run.outputs) {
        int ol = host[o].element().lanes();
        for (int64_t k = 0; k < host[o].size(); ++k)
          for (int oc = 0; oc < ol; ++oc)
            diff += detail::component(run.weights[o], k, oc) *
                    (detail::component(plus[o], k, oc) - detail::component(minus[o], k, oc));
      }
      return diff;
    };
    detail::check_components(r, options, element, elements, get_input, set_input, [&] { return run.forward(); },
                             difference, [&](int64_t e, int c) { return detail::component(g, e, c); });
    report.params.push_back(r);
  }
  if (options.tangents) detail::check_tangents(run, grads, report);
  return report;
}

}  // namespace kjit

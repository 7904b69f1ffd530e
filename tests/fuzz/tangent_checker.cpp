// tangent_checker.cpp — tangent launches of generated programs against the reference's
// directional finite differences and against their adjoints.
#include "tangent_checker.hpp"

#include <cmath>
#include <random>

#include "launch_support.hpp"

namespace fuzz {

namespace {

// The same tolerance as the adjoint's (checker.cpp), per output component. Directional steps
// move every input at once, so they are smaller than the adjoint's per-component ones (fewer
// kinks crossed); Richardson extrapolation keeps the truncation near 1e-12.
constexpr double kRelTol = 1e-6;
constexpr double kAbsFloor = 1e-9;
constexpr double kStep = 2.5e-4;

/// Every output's values after the reference runs at `in` (flattened, outputs in order).
std::vector<double> outputs_at(const kjit::ir::Function& fn, int n, std::vector<RefArg> in, uint64_t* fingerprint) {
  *fingerprint = run_reference(fn, n, in).fingerprint;
  std::vector<double> out;
  for (int p = P_OUT; p < P_COUNT; ++p) out.insert(out.end(), in[size_t(p)].data.begin(), in[size_t(p)].data.end());
  return out;
}

/// `init` moved by h along `dir` (per parameter; empty: not moved).
std::vector<RefArg> moved(const std::vector<RefArg>& init, const std::vector<std::vector<double>>& dir, double h) {
  std::vector<RefArg> x = init;
  for (int p = 0; p < P_COUNT; ++p)
    for (size_t i = 0; i < dir[size_t(p)].size(); ++i) x[size_t(p)].data[i] += h * dir[size_t(p)][i];
  return x;
}

}  // namespace

TangentCheck check_tangent(const Program& prog, const kjit::KernelDef& def, const kjit::ir::Function& fn,
                           const std::vector<RefArg>& init, double scale, std::string* values) {
  TangentCheck t;
  const int n = prog.n;
  std::mt19937_64 rng(prog.seed * 17 + 3);
  std::uniform_real_distribution<double> u(-1, 1);
  uint64_t fp0 = 0;
  outputs_at(fn, n, init, &fp0);

  // Two directions: the arrays a, v, m (also used for the dot product), then s alone.
  for (int round = 0; round < 2; ++round) {
    std::vector<std::vector<double>> dir(P_COUNT);
    if (round == 0) {
      for (int p : {P_A, P_V, P_M}) {
        dir[size_t(p)].resize(init[size_t(p)].data.size());
        for (double& x : dir[size_t(p)]) x = u(rng);
      }
    } else {
      dir[size_t(P_S)] = {1.0};
    }
    std::vector<kjit::NdArray> arrays = device_arrays(init), tangent_arrays(P_COUNT);
    std::vector<kjit::LaunchArg> args = launch_args(arrays, init), tangents(P_COUNT);
    for (int p = 0; p < P_COUNT; ++p) {
      if (kIsOutput[p]) {
        tangent_arrays[size_t(p)] = kjit::NdArray::zeros(elem_type(p), {count_of(p, n)});
        tangents[size_t(p)] = tangent_arrays[size_t(p)];
      } else if (!dir[size_t(p)].empty()) {
        if (p == P_S) {
          tangents[size_t(p)] = dir[size_t(p)][0];
        } else {
          RefArg d = init[size_t(p)];
          d.data = dir[size_t(p)];
          tangent_arrays[size_t(p)] = to_device(p, d);
          tangents[size_t(p)] = tangent_arrays[size_t(p)];
        }
      }
    }
    try {
      kjit::launch_tangent(def, n, args, tangents);
    } catch (const kjit::Error& e) {
      std::string msg = e.what();
      if (e.kind() == kjit::ErrorKind::User && names_line(msg)) {
        t.refused = true;
        t.detail = msg;
        return t;
      }
      t.failure = e.kind() == kjit::ErrorKind::User ? "tangent-refusal-without-line"
                                                    : std::string("tangent-launch-") + kjit::to_string(e.kind());
      t.detail = msg;
      return t;
    } catch (const std::exception& e) {
      t.failure = "crash";
      t.detail = std::string("a bare exception from the tangent launch: ") + e.what();
      return t;
    }
    std::vector<double> jv;
    for (int p = P_OUT; p < P_COUNT; ++p) {
      std::vector<double> part = from_device(p, tangent_arrays[size_t(p)], init[size_t(p)].data.size());
      if (values) append_values(values, std::string(round == 0 ? "tangent-avm." : "tangent-s.") + param_name(p), part);
      jv.insert(jv.end(), part.begin(), part.end());
    }
    if (round == 0) {
      t.direction = dir;
      t.jv.assign(P_COUNT, {});
      size_t at = 0;
      for (int p = P_OUT; p < P_COUNT; ++p) {
        t.jv[size_t(p)].assign(jv.begin() + long(at), jv.begin() + long(at + init[size_t(p)].data.size()));
        at += init[size_t(p)].data.size();
      }
    }

    // Central differences along the direction, Richardson-extrapolated; refined once for
    // steep components (as the adjoint's check does); a step that changes a decision of the
    // program (a branch, a comparison, a min/max side) crossed a kink: the direction is skipped.
    auto difference = [&](double h, bool* smooth) {
      uint64_t fp1 = 0, fp2 = 0;
      std::vector<double> plus = outputs_at(fn, n, moved(init, dir, h), &fp1);
      std::vector<double> minus = outputs_at(fn, n, moved(init, dir, -h), &fp2);
      *smooth = *smooth && fp1 == fp0 && fp2 == fp0;
      std::vector<double> d(plus.size());
      for (size_t i = 0; i < d.size(); ++i) d[i] = (plus[i] - minus[i]) / (2 * h);
      return d;
    };
    bool smooth = true;
    std::vector<double> d1 = difference(kStep, &smooth), d2 = difference(kStep / 2, &smooth);
    if (!smooth) {
      ++t.nonsmooth;
      continue;
    }
    std::vector<double> d4;
    for (size_t i = 0; i < jv.size(); ++i) {
      double fd = (4 * d2[i] - d1[i]) / 3;
      double tol = kRelTol * std::max(std::fabs(fd), std::fabs(jv[i])) + kAbsFloor * (1 + scale);
      if (!(std::fabs(jv[i] - fd) <= tol)) {
        if (d4.empty()) d4 = difference(kStep / 4, &smooth);
        if (!smooth) break;  // counted below
        double fine = (4 * d4[i] - d2[i]) / 3;
        if (std::fabs(fine - fd) > 1e-2 * std::fabs(fine) + 1e-6) continue;  // too steep to judge
        tol = kRelTol * std::max(std::fabs(fine), std::fabs(jv[i])) + kAbsFloor * (1 + scale) + std::fabs(fine - fd) / 4;
        fd = fine;
      }
      ++t.components;
      if (!(std::fabs(jv[i] - fd) <= tol)) {
        t.failure = "tangent";
        t.detail = "output component " + std::to_string(i) + " along " + (round == 0 ? "a, v, m" : "s") +
                   ": finite differences " + fmt(fd) + ", kjit tangent " + fmt(jv[i]);
        return t;
      }
    }
    if (!smooth) ++t.nonsmooth;
  }
  return t;
}

std::string check_dot_product(const TangentCheck& t, const std::vector<std::vector<double>>& w,
                              const std::vector<std::vector<double>>& grads) {
  double jvw = 0, vjw = 0, size = 0;
  for (int p = P_OUT; p < P_COUNT; ++p)
    for (size_t i = 0; i < t.jv[size_t(p)].size(); ++i) {
      jvw += w[size_t(p)][i] * t.jv[size_t(p)][i];
      size += std::fabs(w[size_t(p)][i] * t.jv[size_t(p)][i]);
    }
  for (int p : {P_A, P_V, P_M})
    for (size_t i = 0; i < t.direction[size_t(p)].size(); ++i) {
      vjw += t.direction[size_t(p)][i] * grads[size_t(p)][i];
      size += std::fabs(t.direction[size_t(p)][i] * grads[size_t(p)][i]);
    }
  if (std::fabs(jvw - vjw) <= 1e-9 * (1 + size)) return "";
  return "<w, J v> = " + fmt(jvw) + " from the tangent, <v, J^T w> = " + fmt(vjw) + " from the adjoint";
}

}  // namespace fuzz

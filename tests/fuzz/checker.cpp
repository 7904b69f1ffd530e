// checker.cpp — one batch of programs through kjit on cpu (and NVRTC), each result checked
// against the reference evaluator and its finite differences.
#include "checker.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>
#include <string>
#include <stdexcept>

#include "kjit/compiler/build.hpp"
#include "kjit/ir/ir.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "kjit/runtime/modules.hpp"
#include "kjit/kernel.hpp"
#include "launch_support.hpp"
#include "printer.hpp"
#include "reference.hpp"
#include "tangent_checker.hpp"
#include "walker.hpp"

namespace fuzz {
namespace {

// Gradient tolerance: |adjoint - fd| <= kRelTol * max(|fd|, |adjoint|) + kAbsFloor * (1 + scale),
// scale = sum of |w * output| (the size of L), fd = Richardson-extrapolated central
// differences with steps kStep and kStep / 2 (error O(h^4) ~ 1e-12, rounding ~ 1e-13 * scale).
constexpr double kRelTol = 1e-6;
constexpr double kAbsFloor = 1e-9;
constexpr double kStep = 1e-3;
// Forward values: |kjit - reference| <= kFwdTol * (1 + |reference|) (libm differences only).
constexpr double kFwdTol = 1e-9;

/// A batch-level failure: the module as a whole did not build or launch.
struct ModuleFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The adjoint launch's gradient arguments: zeroed gradients for the differentiable inputs, the
/// weights `w` times `seed_scale` as the outputs' seeds, nothing for the rest; `grads` holds
/// the arrays. `want_s`: whether s's gradient is asked for.
std::vector<kjit::LaunchArg> adjoint_args(const std::vector<RefArg>& init, const std::vector<std::vector<double>>& w,
                                          double seed_scale, int n, bool want_s, std::vector<kjit::NdArray>& grads) {
  std::vector<kjit::LaunchArg> adj;
  for (int p = 0; p < P_COUNT; ++p) {
    if (p == P_A || p == P_V || p == P_M || (p == P_S && want_s)) {
      // The scalar s's gradient (its adjoint summed over the threads) goes to one element.
      grads[size_t(p)] = kjit::NdArray::zeros(elem_type(p), {p == P_S ? 1 : n});
      adj.emplace_back(grads[size_t(p)]);
    } else if (kIsOutput[p]) {
      RefArg wa = init[size_t(p)];
      wa.data = w[size_t(p)];
      for (double& x : wa.data) x *= seed_scale;
      grads[size_t(p)] = to_device(p, wa);
      adj.emplace_back(grads[size_t(p)]);
    } else {
      adj.emplace_back();
    }
  }
  return adj;
}

/// Runs one traced program on cpu and checks it. `solo`: the program has its own module, so
/// a build error is its own. `record`: every buffer read back from kjit's launches is appended
/// to the result's `values` (CheckOptions::dump_values).
ProgramResult check_program(const Program& prog, const kjit::KernelDef& def, bool solo, bool tangents, bool record) {
  ProgramResult r;
  r.seed = prog.seed;
  const kjit::ir::Function& fn = def.ir();
  const int n = prog.n;
  std::vector<RefArg> init = make_inputs(prog);

  // Reference forward.
  std::vector<RefArg> ref = init;
  try {
    run_reference(fn, n, ref);
  } catch (const std::runtime_error& e) {
    r.outcome = Outcome::Failure;
    r.kind = "reference";
    r.detail = e.what();
    return r;
  }
  double scale = 0;
  std::mt19937_64 wrng(prog.seed * 31 + 7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<std::vector<double>> w(P_COUNT);
  for (int p = P_OUT; p < P_COUNT; ++p) {
    w[size_t(p)].resize(ref[size_t(p)].data.size());
    for (size_t i = 0; i < w[size_t(p)].size(); ++i) {
      double x = ref[size_t(p)].data[i];
      if (!std::isfinite(x) || std::fabs(x) > 1e6) {
        r.outcome = Outcome::Degenerate;
        r.kind = "large-or-nonfinite";
        return r;
      }
      w[size_t(p)][i] = u(wrng);
      scale += std::fabs(w[size_t(p)][i] * x);
    }
  }

  // kjit forward on cpu.
  std::vector<kjit::NdArray> arrays = device_arrays(init);
  std::vector<kjit::LaunchArg> args = launch_args(arrays, init);
  try {
    kjit::launch(def, n, args);
  } catch (const kjit::Error& e) {
    if (!solo) throw ModuleFailure(e.what());
    r.outcome = Outcome::Failure;
    r.kind = e.kind() == kjit::ErrorKind::Compile ? "host-compile" : std::string("launch-") + kjit::to_string(e.kind());
    r.detail = e.what();
    return r;
  } catch (const std::exception& e) {
    if (!solo) throw ModuleFailure(e.what());
    r.outcome = Outcome::Failure;
    r.kind = "crash";
    r.detail = std::string("a bare exception from the forward launch: ") + e.what();
    return r;
  }
  // Every output is read back before any is checked, so that the values recorded do not
  // depend on where the check stops.
  std::vector<std::vector<double>> outputs(P_COUNT);
  for (int p = P_OUT; p < P_COUNT; ++p) {
    outputs[size_t(p)] = from_device(p, arrays[size_t(p)], ref[size_t(p)].data.size());
    if (record) append_values(&r.values, std::string("forward.") + param_name(p), outputs[size_t(p)]);
  }
  for (int p = P_OUT; p < P_COUNT; ++p) {
    const std::vector<double>& got = outputs[size_t(p)];
    for (size_t i = 0; i < got.size(); ++i) {
      double want = ref[size_t(p)].data[i];
      if (!(std::fabs(got[i] - want) <= kFwdTol * (1 + std::fabs(want)))) {
        r.outcome = Outcome::Failure;
        r.kind = "forward";
        r.detail = std::string(param_name(p)) + " component " + std::to_string(i) + ": reference " +
                   fmt(want) + ", kjit " + fmt(got[i]);
        return r;
      }
    }
  }

  // kjit tangents (forward mode): against finite differences along directions now, against
  // the adjoint once it has run.
  TangentCheck tangent;
  if (tangents) tangent = check_tangent(prog, def, fn, init, scale, record ? &r.values : nullptr);
  r.tangent_components = tangent.components;
  r.tangent_nonsmooth = tangent.nonsmooth;
  r.tangent_refused = tangent.refused;
  if (!tangent.failure.empty()) {
    r.outcome = Outcome::Failure;
    r.kind = tangent.failure;
    r.detail = tangent.detail;
    return r;
  }

  // kjit adjoint.
  std::vector<kjit::NdArray> grads(P_COUNT);
  // Odd seeds ask for s's gradient, which the cpu entry sums through the strided body; even
  // ones do not, so that the adjoint lane functions (the entry's path when no value gradient
  // is wanted, entry_points.hpp) are checked too.
  const bool want_s = prog.seed % 2 == 1;
  std::vector<int> checked = {P_A, P_V, P_M};
  if (want_s) checked.push_back(P_S);
  std::vector<kjit::LaunchArg> adj = adjoint_args(init, w, 1, n, want_s, grads);
  try {
    kjit::launch_adjoint(def, n, args, adj);
  } catch (const kjit::Error& e) {
    std::string msg = e.what();
    if (e.kind() == kjit::ErrorKind::User) {
      r.outcome = names_line(msg) ? Outcome::Refused : Outcome::Failure;
      r.kind = names_line(msg) ? "adjoint refused" : "refusal-without-line";
      r.detail = msg;
      if (r.outcome == Outcome::Refused) {
        // Keep the reason short and stable for the tally: its first words.
        std::string reason = msg.substr(msg.find(": ") == std::string::npos ? 0 : msg.find(": ") + 2, 60);
        r.kind = "adjoint: " + reason;
      }
      return r;
    }
    if (!solo && e.kind() == kjit::ErrorKind::Compile) throw ModuleFailure(msg);
    r.outcome = Outcome::Failure;
    r.kind = std::string("adjoint-launch-") + kjit::to_string(e.kind());
    r.detail = msg;
    return r;
  } catch (const std::exception& e) {
    r.outcome = Outcome::Failure;
    r.kind = "crash";
    r.detail = std::string("a bare exception from the adjoint launch: ") + e.what();
    return r;
  }

  // The adjoint's own rounding error, estimated where it matters: the same adjoint once more
  // with its seeds (the weights w) tripled, then divided by 3. The sweep is linear in the
  // seeds, so only rounding differs: a reverse sweep that cancels large adjoints (a path whose
  // primal cancels exactly, `m - m`, carrying an adjoint of 1e10 past a small one) leaves the
  // small one rounded to the large one's ulp, on another grid once tripled. Finite differences
  // never see that path.
  // Run at most once per program, on its first failing component; empty when the rerun
  // failed (no estimate: the mismatch stands).
  std::vector<std::vector<double>> tripled_grads;
  bool tripled_ran = false;
  auto adjoint_spread = [&](int p, size_t j, double adjoint) -> double {
    if (!tripled_ran) {
      tripled_ran = true;
      std::vector<kjit::NdArray> arrays2 = device_arrays(init), grads2(P_COUNT);
      std::vector<kjit::LaunchArg> args2 = launch_args(arrays2, init);
      std::vector<kjit::LaunchArg> adj2 = adjoint_args(init, w, 3, n, want_s, grads2);
      try {
        kjit::launch(def, n, args2);
        kjit::launch_adjoint(def, n, args2, adj2);
        tripled_grads.resize(P_COUNT);
        for (int q : checked) {
          tripled_grads[size_t(q)] = from_device(q, grads2[size_t(q)], init[size_t(q)].data.size());
          if (record) append_values(&r.values, std::string("adjoint-x3.") + param_name(q), tripled_grads[size_t(q)]);
          for (double& x : tripled_grads[size_t(q)]) x /= 3;
        }
      } catch (const std::exception&) {
        tripled_grads.clear();
      }
    }
    return tripled_grads.empty() ? 0 : std::fabs(tripled_grads[size_t(p)][j] - adjoint);
  };

  // Finite differences of L = sum w * outputs on the reference, per input component.
  auto loss = [&](const std::vector<RefArg>& in, uint64_t* fp) {
    std::vector<RefArg> x = in;
    RefResult rr = run_reference(fn, n, x);
    *fp = rr.fingerprint;
    double L = 0;
    for (int p = P_OUT; p < P_COUNT; ++p)
      for (size_t i = 0; i < x[size_t(p)].data.size(); ++i) L += w[size_t(p)][i] * x[size_t(p)].data[i];
    return L;
  };
  uint64_t fp0 = 0;
  loss(init, &fp0);
  // The gradients (a, v, m and, for odd seeds, s), all read back before any is checked; the
  // outputs' adjoints as the launch leaves them (atomic min/max consume theirs) are recorded
  // too, though nothing checks them.
  std::vector<std::vector<double>> gradients(P_COUNT);
  for (int p : checked) {
    gradients[size_t(p)] = from_device(p, grads[size_t(p)], init[size_t(p)].data.size());
    if (record) append_values(&r.values, std::string("adjoint.") + param_name(p), gradients[size_t(p)]);
  }
  if (record)
    for (int p = P_OUT; p < P_COUNT; ++p)
      append_values(&r.values, std::string("adjoint.") + param_name(p),
                    from_device(p, grads[size_t(p)], init[size_t(p)].data.size()));
  for (int p : checked) {
    const std::vector<double>& g = gradients[size_t(p)];
    for (size_t j = 0; j < g.size(); ++j) {
      double vals[4];
      const double steps[4] = {kStep, -kStep, kStep / 2, -kStep / 2};
      bool smooth = true;
      for (int q = 0; q < 4; ++q) {
        std::vector<RefArg> x = init;
        x[size_t(p)].data[j] += steps[q];
        uint64_t fp = 0;
        vals[q] = loss(x, &fp);
        smooth = smooth && fp == fp0;
      }
      if (!smooth) { ++r.nonsmooth; continue; }
      double d1 = (vals[0] - vals[1]) / (2 * kStep), d2 = (vals[2] - vals[3]) / kStep;
      double fd = (4 * d2 - d1) / 3;
      ++r.components;
      double tol = kRelTol * std::max(std::fabs(fd), std::fabs(g[j])) + kAbsFloor * (1 + scale);
      if (!(std::fabs(g[j] - fd) <= tol)) {
        // Steep components (a fast oscillation, a large Hessian): refine once with steps h/2
        // and h/4; the difference of the two extrapolations bounds the finer one's error.
        double v4[2];
        for (int q = 0; q < 2; ++q) {
          std::vector<RefArg> x = init;
          x[size_t(p)].data[j] += q == 0 ? kStep / 4 : -kStep / 4;
          uint64_t fp = 0;
          v4[q] = loss(x, &fp);
          smooth = smooth && fp == fp0;
        }
        if (!smooth) { --r.components; ++r.nonsmooth; continue; }
        double d4 = (v4[0] - v4[1]) / (kStep / 2);
        double fine = (4 * d4 - d2) / 3;
        // Still far from converged: the component oscillates faster than any usable step
        // resolves (sin of a large argument); finite differences cannot judge it.
        if (std::fabs(fine - fd) > 1e-2 * std::fabs(fine) + 1e-6) { --r.components; ++r.nonsmooth; continue; }
        tol = kRelTol * std::max(std::fabs(fine), std::fabs(g[j])) + kAbsFloor * (1 + scale) +
              std::fabs(fine - fd) / 4;
        fd = fine;
      }
      if (!(std::fabs(g[j] - fd) <= tol)) {
        // The adjoint's rounding, not its rules: when tripling its seeds moves it by more than
        // a tenth of the mismatch, it cannot be judged to 1e-6 (counted apart).
        double spread = adjoint_spread(p, j, g[j]);
        if (spread > 1e-9 * (std::fabs(g[j]) + 1) && 10 * spread >= std::fabs(g[j] - fd)) {
          --r.components;
          ++r.rounding;
          continue;
        }
        r.outcome = Outcome::Failure;
        r.kind = "adjoint";
        r.detail = "d L / d " + std::string(param_name(p)) + " component " + std::to_string(j) +
                   ": finite differences " + fmt(fd) + ", kjit adjoint " + fmt(g[j]) +
                   " (" + fmt(spread) + " with its seeds tripled and divided by 3)";
        return r;
      }
    }
  }
  if (!tangent.refused && !tangent.jv.empty()) {
    std::vector<std::vector<double>> g(P_COUNT);
    for (int p : {P_A, P_V, P_M}) g[size_t(p)] = gradients[size_t(p)];
    std::string dot = check_dot_product(tangent, w, g);
    r.dot_checked = true;
    if (!dot.empty()) {
      r.outcome = Outcome::Failure;
      r.kind = "tangent-dot";
      r.detail = dot;
    }
  }
  return r;
}

/// The kernel name a program is registered under.
std::string kernel_name(const Program& p) {
  return "fuzz::s" + std::to_string(p.seed) + "_" + std::to_string(p.variant);
}

/// The name a module's dumped text gets (CheckOptions::dump_source): its program's seed, or
/// the first and last seeds of its programs, with ".r<round>" for the rest of a batch that
/// failed as a whole.
std::string dump_stem(const std::vector<Program>& programs, int round) {
  std::string stem = std::to_string(programs.front().seed);
  if (programs.size() > 1) {
    stem += "-" + std::to_string(programs.back().seed);
    if (round > 0) stem += ".r" + std::to_string(round);
  }
  return stem;
}

/// Writes `text` to file `name` in folder `dir`; false when it could not.
bool write_text(const std::string& dir, const std::string& name, const std::string& text) {
  std::ofstream f(std::filesystem::path(dir) / name, std::ios::binary | std::ios::trunc);
  f.write(text.data(), std::streamsize(text.size()));
  f.close();
  return bool(f);
}

/// What generating a module's texts gave: `kind` and `error` are empty when every text was
/// generated (and written).
struct Generated {
  std::string kind;   ///< "generate", "generate-tangent" or "dump"
  std::string error;
};

/// Generates the text of module `module` as the compiler is given it (the module's own
/// options: what a launch builds) and, with tangents on, of its tangent module (what the first
/// launch_tangent builds), and writes them to o.dump_source when set: <stem>.cu and
/// <stem>.tangent.cu, or <stem>.error / <stem>.tangent.error holding the message where
/// generation failed.
Generated generate_texts(const std::string& module, const std::string& stem, const CheckOptions& o) {
  Generated g;
  // One module's text (`tangent`: the tangent module's, made from `module` first).
  auto one = [&](bool tangent) {
    const std::string file = stem + (tangent ? ".tangent" : "");
    std::string text, error;
    try {
      const std::string name = tangent ? kjit::make_tangent_module(module) : module;
      if (name.empty()) return;  // forward mode refused every kernel: no tangent module
      text = kjit::module_compile_input(name).source.source_text();
    } catch (const std::exception& e) {
      error = e.what();
      if (error.empty()) error = "(an exception without a message)";
      if (g.kind.empty()) {
        g.kind = tangent ? "generate-tangent" : "generate";
        g.error = error;
      }
    }
    if (o.dump_source.empty()) return;
    const std::string name = file + (error.empty() ? ".cu" : ".error");
    if (!write_text(o.dump_source, name, error.empty() ? text : error + "\n")) {
      g.kind = "dump";
      g.error = "cannot write " + (std::filesystem::path(o.dump_source) / name).string();
    }
  };
  one(false);
  if (o.tangents) one(true);
  return g;
}

/// Registers, traces and checks programs that share module `module` (solo: one program); its
/// dumped text (CheckOptions::dump_source) is named `stem`. When the module fails as a whole,
/// the programs left unchecked are put in `redo` and the error in `why`.
std::vector<ProgramResult> run_module(const std::vector<Program>& programs, const std::string& module,
                                      const std::string& stem, const CheckOptions& o, bool solo,
                                      std::vector<size_t>* redo, std::string* why) {
  std::vector<ProgramResult> results(programs.size());
  std::vector<std::unique_ptr<KernelReg>> regs(programs.size());
  std::vector<size_t> live;
  kjit::ModuleOptions mo = kjit::module(module).options();
  mo.opt_level = o.opt_level;
  if (o.adjoint_span >= 0) mo.adjoint_span = o.adjoint_span;
  mo.tangent_adjoint = false;  // second derivatives are not checked here: the tangent module builds in half the time
  kjit::module(module).set_options(mo);
  for (size_t i = 0; i < programs.size(); ++i) {
    ProgramResult& r = results[i];
    r.seed = programs[i].seed;
    try {
      regs[i] = register_program(programs[i], kernel_name(programs[i]), module);
      regs[i]->def().ir();
      live.push_back(i);
    } catch (const kjit::Error& e) {
      bool user = e.kind() == kjit::ErrorKind::User;
      r.outcome = user && names_line(e.what()) ? Outcome::Refused : Outcome::Failure;
      r.kind = user ? (r.outcome == Outcome::Refused ? "trace refused" : "refusal-without-line")
                    : std::string("trace-") + kjit::to_string(e.kind());
      r.detail = e.what();
      regs[i].reset();
    } catch (const std::exception& e) {
      r.outcome = Outcome::Failure;
      r.kind = "crash";
      r.detail = std::string("a bare exception while tracing: ") + e.what();
      regs[i].reset();
    }
  }
  if (live.empty()) return results;

  if (!o.dump_source.empty() || o.generate_only) {
    const Generated g = generate_texts(module, stem, o);
    if (g.kind == "dump" || (o.generate_only && !g.kind.empty())) {
      // Generate-only: a module whose text fails as a whole is split as a failed launch's is.
      if (g.kind != "dump" && !solo) {
        for (size_t i : live) redo->push_back(i);
        *why = g.error;
        return results;
      }
      for (size_t i : live) {
        results[i].outcome = Outcome::Failure;
        results[i].kind = g.kind;
        results[i].detail = g.error.substr(0, 4000);
      }
      return results;
    }
    if (o.generate_only) return results;  // every live program generated: Pass
  }

  bool nvrtc_failed = false;
  std::string nvrtc_error;
  if (o.nvrtc) {
    try {
      kjit::compiler::ModuleSource s = kjit::module_compile_input(module).source;
      kjit::compiler::CompileOptions fast;
      fast.fast_compile = true;
      auto t0 = std::chrono::steady_clock::now();
      kjit::compiler::Artifact a = kjit::compiler::build_module(s, kjit::compiler::Target::parse(getenv("FZ_TARGET") ? getenv("FZ_TARGET") : "sm_90"), fast);
      if (o.verbose) std::fprintf(stderr, "nvrtc %s: %.2f s\n", module.c_str(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (a.image.size() < 16) throw std::runtime_error("NVRTC returned an empty image");
      // The tangent kernels of the module (those forward mode refuses are left out) too.
      const std::string tangents = o.tangents ? kjit::make_tangent_module(module) : "";
      if (!tangents.empty()) {
        kjit::compiler::ModuleSource ts = kjit::module_compile_input(tangents).source;
        kjit::compiler::Artifact ta = kjit::compiler::build_module(ts, kjit::compiler::Target::parse(getenv("FZ_TARGET") ? getenv("FZ_TARGET") : "sm_90"), fast);
        if (ta.image.size() < 16) throw std::runtime_error("NVRTC returned an empty image for " + tangents);
      }
    } catch (const std::exception& e) {
      nvrtc_failed = true;
      nvrtc_error = e.what();
    }
  }
  if (nvrtc_failed && !solo) {
    for (size_t i : live) { regs[i].reset(); redo->push_back(i); }
    *why = nvrtc_error;
    return results;
  }
  for (size_t k = 0; k < live.size(); ++k) {
    size_t i = live[k];
    try {
      results[i] = check_program(programs[i], regs[i]->def(), solo, o.tangents, !o.dump_values.empty());
    } catch (const ModuleFailure& f) {
      for (size_t q = k; q < live.size(); ++q) { regs[live[q]].reset(); redo->push_back(live[q]); }
      *why = f.what();
      return results;
    }
    if (nvrtc_failed && results[i].outcome != Outcome::Failure) {
      results[i].outcome = Outcome::Failure;
      results[i].kind = "nvrtc";
      results[i].detail = nvrtc_error.substr(0, 4000);
    }
  }
  return results;
}

/// Writes `r`'s values (CheckOptions::dump_values) to <dir>/<seed>.values: a header of text
/// lines
///   kjit_autodiff_fuzz values 1
///   seed <seed>
///   n <threads of each launch>
///   outcome <pass | degenerate | refused | failure <kind>>
///   tangents <checked | refused | off>   (off: --no-tangents; refused: forward mode refused
///                                         the program; checked: where it got that far)
/// then one record per buffer read back from kjit's launches, in the order the checker read
/// them: the line "<name> float64 <values> <bytes>", that many raw bytes, and a newline. The
/// names: forward.<output>; tangent-avm.<output> and tangent-s.<output> (the tangent launches
/// along a, v, m and along s); adjoint.<input> (a, v, m, and s for odd seeds) and
/// adjoint.<output> (the outputs' adjoints after the launch); adjoint-x3.<input> (the adjoint
/// rerun with its seeds tripled, when a mismatch made the checker run it). A program stopped
/// early (refused, degenerate, failed) has the records read back until then. Only the
/// outcome's kind of a failure is written, not its message, and no message of a refusal, which
/// name the checkout's paths. False when the file could not be written.
bool write_values_file(const std::string& dir, const Program& p, const ProgramResult& r, bool tangents) {
  std::string head = "kjit_autodiff_fuzz values 1\nseed " + std::to_string(p.seed) + "\nn " + std::to_string(p.n) +
                     "\noutcome ";
  switch (r.outcome) {
    case Outcome::Pass: head += "pass"; break;
    case Outcome::Degenerate: head += "degenerate"; break;
    case Outcome::Refused: head += "refused"; break;
    case Outcome::Failure: head += "failure " + r.kind; break;
  }
  head += std::string("\ntangents ") + (!tangents ? "off" : r.tangent_refused ? "refused" : "checked") + "\n";
  return write_text(dir, std::to_string(p.seed) + ".values", head + r.values);
}

std::string describe_inputs(const Program& p) {
  std::vector<RefArg> in = make_inputs(p);
  std::ostringstream o;
  o << "// inputs (n = " << p.n << "):";
  for (int q = 0; q < P_COUNT; ++q) {
    if (q == P_OUT || q == P_OUTV) continue;
    o << "\n//   " << param_name(q) << " = {";
    for (size_t i = 0; i < in[size_t(q)].data.size(); ++i) o << (i ? ", " : "") << fmt(in[size_t(q)].data[i]);
    o << "}";
  }
  o << "\n//   out, outv = zeros; the loss is sum(w * outputs) with weights from the seed\n";
  return o.str();
}

}  // namespace

/// The index in `programs` of the program whose kernel `message` names, or -1. A module fails
/// as a whole when one kernel's code generation refuses or fails; the error names that kernel.
static long culprit_of(const std::string& message, const std::vector<Program>& programs, const std::vector<size_t>& among) {
  for (size_t i : among) {
    std::string name = kernel_name(programs[i]);
    for (size_t at = message.find(name); at != std::string::npos; at = message.find(name, at + 1)) {
      size_t end = at + name.size();
      if (end == message.size() || !std::isdigit(static_cast<unsigned char>(message[end]))) return long(i);
    }
  }
  return -1;
}

std::vector<ProgramResult> check_batch(const std::vector<Program>& programs, const std::string& module,
                                       const CheckOptions& o) {
  std::vector<ProgramResult> results(programs.size());
  std::vector<size_t> pending(programs.size());
  for (size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  // When the shared module fails, the kernel the error names runs alone and the others share
  // a new module: one refusal no longer costs a host compile per program of the batch.
  for (int round = 0; !pending.empty(); ++round) {
    std::vector<Program> sub;
    for (size_t i : pending) sub.push_back(programs[i]);
    std::vector<size_t> redo;
    std::string why;
    std::vector<ProgramResult> rs = run_module(sub, round ? module + "_r" + std::to_string(round) : module,
                                               dump_stem(sub, round), o, sub.size() == 1, &redo, &why);
    std::vector<size_t> failed;
    for (size_t k : redo) failed.push_back(pending[k]);
    for (size_t k = 0; k < sub.size(); ++k)
      if (std::find(redo.begin(), redo.end(), k) == redo.end()) results[pending[k]] = rs[k];
    if (failed.empty()) break;
    long culprit = culprit_of(why, programs, failed);
    if (o.verbose)
      std::fprintf(stderr, "module %s (round %d): %zu left unchecked, culprit %ld: %.400s\n", module.c_str(), round,
                   failed.size(), culprit, why.c_str());
    std::vector<size_t> alone = failed;
    if (culprit >= 0 && round < 8) {
      alone = {size_t(culprit)};
      failed.erase(std::find(failed.begin(), failed.end(), size_t(culprit)));
    } else {
      failed.clear();
    }
    for (size_t i : alone) {
      std::vector<size_t> none;
      std::string ignored;
      results[i] = run_module({programs[i]}, module + "_solo" + std::to_string(i), dump_stem({programs[i]}, 0), o,
                              true, &none, &ignored)[0];
    }
    pending = failed;
  }
  return results;
}

std::string Summary::line() const {
  std::ostringstream s;
  if (generate_only) {
    s << "kjit_autodiff_fuzz --generate-only: " << programs << " programs, " << passed << " generated, "
      << refusals << " refused while tracing, " << failures << " failures";
    if (!failures_by_kind.empty()) {
      s << " (";
      bool first = true;
      for (auto& [k, c] : failures_by_kind) { s << (first ? "" : ", ") << k << ": " << c; first = false; }
      s << ")";
    }
    s << "; nothing compiled, launched or checked";
    return s.str();
  }
  s << "kjit_autodiff_fuzz: " << programs << " programs, " << passed << " passed, " << refusals
    << " refusals, " << degenerate << " degenerate, " << failures << " failures";
  if (!failures_by_kind.empty()) {
    s << " (";
    bool first = true;
    for (auto& [k, c] : failures_by_kind) { s << (first ? "" : ", ") << k << ": " << c; first = false; }
    s << ")";
  }
  s << "; " << components << " gradient components checked, " << nonsmooth << " skipped at kinks";
  if (rounding) s << ", " << rounding << " dominated by the adjoint's own rounding";
  s << "; tangents: " << tangent_components << " components checked, " << tangent_nonsmooth
    << " directions skipped at kinks, " << tangent_refusals << " programs refused in forward mode, "
    << dot_products << " dot products against the adjoint";
  return s.str();
}

Summary run_seeds(uint64_t first, uint64_t count, const CheckOptions& o) {
  Summary sum;
  sum.generate_only = o.generate_only;
  // Shrinking checks other programs under the seed's name: none of their texts or values is
  // dumped.
  CheckOptions shrinking = o;
  shrinking.dump_source.clear();
  shrinking.dump_values.clear();
  std::mutex mu;
  std::atomic<uint64_t> next{0};
  const uint64_t batches = (count + uint64_t(o.batch) - 1) / uint64_t(o.batch);
  auto worker = [&] {
    for (;;) {
      uint64_t b = next++;
      if (b >= batches) return;
      std::vector<Program> progs;
      for (uint64_t s = first + b * uint64_t(o.batch); s < std::min(first + count, first + (b + 1) * uint64_t(o.batch)); ++s)
      {
        progs.push_back(generate(s, o.gen));
        if (o.threads > 0) progs.back().n = o.threads;
      }
      std::vector<ProgramResult> res = check_batch(progs, "fuzz_" + std::to_string(first) + "_" + std::to_string(b), o);
      for (size_t i = 0; i < res.size(); ++i) {
        ProgramResult r = res[i];
        if (!o.dump_values.empty() && !o.generate_only) {
          if (!write_values_file(o.dump_values, progs[i], r, o.tangents) && r.outcome != Outcome::Failure) {
            r.outcome = Outcome::Failure;
            r.kind = "dump-values";
            r.detail = "cannot write " + (std::filesystem::path(o.dump_values) / (std::to_string(r.seed) + ".values")).string();
          }
          r.values.clear();
        }
        if (r.outcome == Outcome::Failure && o.shrink && r.kind != "dump-values") {
          Program small = shrink(progs[i], r.kind, shrinking);
          std::vector<ProgramResult> again = check_batch({small}, "fuzz_shrunk_" + std::to_string(r.seed), shrinking);
          std::ostringstream d;
          d << "seed " << r.seed << ": " << r.kind << ": " << r.detail.substr(0, 2000) << "\n"
            << "shrunk from " << program_size(progs[i]) << " to " << program_size(small)
            << " statements; the shrunk program gives: " << again[0].kind << ": " << again[0].detail.substr(0, 2000)
            << "\n" << to_dsl_source(small, "fuzz_repro_" + std::to_string(r.seed)) << describe_inputs(small);
          r.detail = d.str();
        } else if (r.outcome == Outcome::Failure) {
          r.detail = "seed " + std::to_string(r.seed) + ": " + r.kind + ": " + r.detail + "\n" +
                     to_dsl_source(progs[i], "fuzz_repro_" + std::to_string(r.seed));
        }
        std::lock_guard<std::mutex> lock(mu);
        ++sum.programs;
        sum.components += r.components;
        sum.nonsmooth += r.nonsmooth;
        sum.rounding += r.rounding;
        sum.tangent_components += r.tangent_components;
        sum.tangent_nonsmooth += r.tangent_nonsmooth;
        sum.tangent_refusals += r.tangent_refused;
        sum.dot_products += r.dot_checked;
        switch (r.outcome) {
          case Outcome::Pass: ++sum.passed; break;
          case Outcome::Refused: ++sum.refusals; ++sum.refusals_by_reason[r.kind]; break;
          case Outcome::Degenerate: ++sum.degenerate; break;
          case Outcome::Failure:
            ++sum.failures;
            ++sum.failures_by_kind[r.kind];
            sum.failed.push_back(r);
            break;
        }
        if (o.verbose)
          std::fprintf(stderr, "seed %llu: %s %s\n", (unsigned long long)r.seed,
                       r.outcome == Outcome::Pass ? "pass" : r.outcome == Outcome::Refused ? "refused" :
                       r.outcome == Outcome::Degenerate ? "degenerate" : "FAIL", r.kind.c_str());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < std::max(1, o.jobs); ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  std::sort(sum.failed.begin(), sum.failed.end(), [](const ProgramResult& a, const ProgramResult& b) { return a.seed < b.seed; });
  return sum;
}

}  // namespace fuzz

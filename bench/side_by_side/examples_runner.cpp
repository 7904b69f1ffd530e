// bench/side_by_side/examples_runner.cpp — kjit's side of bench/examples_side_by_side.py: every
// kernel of examples/ exactly as users copy it (saxpy, daxpy, springs, springs_f64, damp,
// iterate), launched forward, adjoint and tangent on the cpu device over the inputs the script
// wrote, answering `time CASE` / `check CASE PATH` on stdin (runner.hpp's protocol). Cases are
// "<kernel>_<fwd|adj|tan>"; results are written as the kernel's element type (float32 or
// float64), outputs first, then gradients or tangents.
#include <cstring>

#include "kjit/kjit.hpp"
#include "loops.hpp"
#include "runner.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace side_by_side;

namespace {

/// The scalars of the examples' kernels; examples_side_by_side.py uses the same ones.
constexpr double kA = 2.0, kK = 10.0, kC = 1.1;
constexpr int kSteps = 16;

template <class T>
kjit::NdArray array_of(const std::string& dir, const std::string& name, int64_t n, int lanes = 1) {
  std::vector<T> v = read_raw<T>(dir, name);
  if (int64_t(v.size()) != n * lanes) throw std::runtime_error(name + ": unexpected size");
  if (lanes == 1) return kjit::from_vector(v);
  std::vector<kjit::vec<3, T>> p(static_cast<size_t>(n), kjit::vec<3, T>{});
  std::memcpy(p.data(), v.data(), v.size() * sizeof(T));
  return kjit::from_vector(p);
}

size_t bytes_of(const kjit::NdArray& a) { return size_t(a.size()) * a.element_bytes(); }

/// One kernel's three cases over `fwd` (the forward launch), `adj` and `tan`, with the arrays
/// each writes into (zeroed by `reset`) in the order `check` reports them.
void add_cases(std::map<std::string, Case>& cases, const std::string& kernel, std::function<void()> fwd,
               std::vector<kjit::NdArray> fwd_out, std::function<void()> adj, std::vector<kjit::NdArray> adj_out,
               std::function<void()> tan, std::vector<kjit::NdArray> tan_out) {
  auto add = [&](const std::string& mode, std::function<void()> run, std::vector<kjit::NdArray> out) {
    Case c;
    c.run = std::move(run);
    c.reset = [out] { for (kjit::NdArray a : out) a.zero(); };
    for (const kjit::NdArray& a : out) c.results.push_back({a.data(), bytes_of(a)});
    cases[kernel + "_" + mode] = std::move(c);
  };
  add("fwd", std::move(fwd), std::move(fwd_out));
  add("adj", std::move(adj), std::move(adj_out));
  add("tan", std::move(tan), std::move(tan_out));
}

/// saxpy or daxpy over n elements of T.
template <class T, class K>
void axpy_cases(std::map<std::string, Case>& cases, const std::string& name, const K& kernel,
                const std::string& dir, const std::string& suffix, int64_t n) {
  auto x = array_of<T>(dir, "axpy_x" + suffix, n), y = array_of<T>(dir, "axpy_y" + suffix, n),
       g = array_of<T>(dir, "axpy_g" + suffix, n), dx = array_of<T>(dir, "axpy_dx" + suffix, n),
       dy = array_of<T>(dir, "axpy_dy" + suffix, n);
  auto out = kjit::zeros<T>({n}), gx = kjit::zeros<T>({n}), gy = kjit::zeros<T>({n}), dout = kjit::zeros<T>({n});
  const T a = T(kA);
  add_cases(cases, name, [=, &kernel] { kjit::launch(kernel, n, x, y, a, out); }, {out},
            [=, &kernel] { kjit::launch_adjoint(kernel, n, {x, y, a, out}, {gx, gy, {}, g}); }, {gx, gy},
            [=, &kernel] { kjit::launch_tangent(kernel, n, {x, y, a, out}, {dx, dy, {}, dout}); }, {out, dout});
}

/// springs or springs_f64: s springs between p particles.
template <class T, class K>
void springs_cases(std::map<std::string, Case>& cases, const std::string& name, const K& kernel,
                   const std::string& dir, const std::string& suffix, int64_t p, int64_t s) {
  auto x = array_of<T>(dir, "springs_x" + suffix, p, 3), g = array_of<T>(dir, "springs_g" + suffix, p, 3),
       dx = array_of<T>(dir, "springs_dx" + suffix, p, 3), rest = array_of<T>(dir, "springs_rest" + suffix, s);
  auto pairs = array_of<int32_t>(dir, "springs_pairs.i32", 2 * s);
  auto f = kjit::zeros<kjit::vec<3, T>>({p}), gx = kjit::zeros<kjit::vec<3, T>>({p}),
       df = kjit::zeros<kjit::vec<3, T>>({p});
  const T k = T(kK);
  // The forward and tangent add into f (and df): each timed run adds to what the last left,
  // as a simulation step that accumulates forces does; `check` starts from zeros.
  add_cases(cases, name, [=, &kernel] { kjit::launch(kernel, s, x, pairs, rest, k, f); }, {f},
            [=, &kernel] { kjit::launch_adjoint(kernel, s, {x, pairs, rest, k, f}, {gx, {}, {}, {}, g}); }, {gx},
            [=, &kernel] { kjit::launch_tangent(kernel, s, {x, pairs, rest, k, f}, {dx, {}, {}, {}, df}); }, {f, df});
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = data_dir_argument(argc, argv);
  const std::vector<int64_t> sizes = read_raw<int64_t>(dir, "sizes.i64");
  if (sizes.size() != 5) throw std::runtime_error("sizes.i64: expected 5 sizes");
  const int64_t n_axpy = sizes[0], n_particles = sizes[1], n_springs = sizes[2], n_damp = sizes[3],
                n_iterate = sizes[4];
  std::map<std::string, Case> cases;
  axpy_cases<float>(cases, "saxpy", demo::saxpy, dir, ".f32", n_axpy);
  axpy_cases<double>(cases, "daxpy", demo::daxpy, dir, ".f64", n_axpy);
  springs_cases<float>(cases, "springs", demo::springs, dir, ".f32", n_particles, n_springs);
  springs_cases<double>(cases, "springs_f64", demo::springs_f64, dir, ".f64", n_particles, n_springs);

  auto v = array_of<float>(dir, "damp_v.f32", n_damp, 3), dg = array_of<float>(dir, "damp_g.f32", n_damp, 3),
       dv = array_of<float>(dir, "damp_dv.f32", n_damp, 3);
  auto dout = kjit::zeros<kjit::vec3f>({n_damp}), gv = kjit::zeros<kjit::vec3f>({n_damp}),
       tout = kjit::zeros<kjit::vec3f>({n_damp});
  const float c = float(kC);
  add_cases(cases, "damp", [=] { kjit::launch(demo::damp, n_damp, v, c, kSteps, dout); }, {dout},
            [=] { kjit::launch_adjoint(demo::damp, n_damp, {v, c, kSteps, dout}, {gv, {}, {}, dg}); }, {gv},
            [=] { kjit::launch_tangent(demo::damp, n_damp, {v, c, kSteps, dout}, {dv, {}, {}, tout}); }, {dout, tout});

  auto ix = array_of<double>(dir, "iterate_x.f64", n_iterate), ic = array_of<double>(dir, "iterate_c.f64", n_iterate),
       ig = array_of<double>(dir, "iterate_g.f64", n_iterate), idx = array_of<double>(dir, "iterate_dx.f64", n_iterate),
       idc = array_of<double>(dir, "iterate_dc.f64", n_iterate);
  auto iout = kjit::zeros<double>({n_iterate}), igx = kjit::zeros<double>({n_iterate}),
       igc = kjit::zeros<double>({n_iterate}), itan = kjit::zeros<double>({n_iterate});
  add_cases(cases, "iterate", [=] { kjit::launch(demo::iterate, n_iterate, ix, ic, kSteps, iout); }, {iout},
            [=] { kjit::launch_adjoint(demo::iterate, n_iterate, {ix, ic, kSteps, iout}, {igx, igc, {}, ig}); },
            {igx, igc},
            [=] { kjit::launch_tangent(demo::iterate, n_iterate, {ix, ic, kSteps, iout}, {idx, idc, {}, itan}); },
            {iout, itan});
  return serve(cases);
}

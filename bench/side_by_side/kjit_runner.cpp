// bench/side_by_side/kjit_runner.cpp — kjit's side of the side-by-side cpu benchmark: the kernels
// of kernels.hpp launched on the cpu device (forward: kjit::launch, adjoint: kjit::launch_adjoint),
// plus saxpy's launch time at several sizes (`size N REPS`), for the pool against one thread.
#include <algorithm>
#include <cstring>

#include "kernels.hpp"
#include "kjit/kjit.hpp"
#include "runner.hpp"

using namespace side_by_side;

namespace {

/// A cpu array holding the floats `v` as n Vec3s.
kjit::NdArray vec3_array(const std::vector<float>& v) {
  static_assert(sizeof(kjit::vec3f) == 12, "Vec3f is three packed floats");
  std::vector<kjit::vec3f> p(v.size() / 3);
  std::memcpy(p.data(), v.data(), v.size() * sizeof(float));
  return kjit::from_vector(p);
}

void zero(kjit::NdArray& a, size_t bytes) { std::memset(a.data(), 0, bytes); }

/// Milliseconds per saxpy launch of n threads: the median of 7 batches of `reps` launches.
double saxpy_launch_ms(int64_t n, int reps) {
  auto x = kjit::zeros<float>({n}), y = kjit::zeros<float>({n}), out = kjit::zeros<float>({n});
  kjit::launch(saxpy, n, x, y, kSaxpyA, out);
  std::vector<double> batches;
  for (int b = 0; b < 7; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) kjit::launch(saxpy, n, x, y, kSaxpyA, out);
    const auto t1 = std::chrono::steady_clock::now();
    batches.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() / reps);
  }
  std::sort(batches.begin(), batches.end());
  return batches[3];
}

}  // namespace

int main(int argc, char** argv) {
  const Inputs in(data_dir_argument(argc, argv));
  const int64_t ns = int64_t(in.sx.size()), np = int64_t(in.px.size() / 3), nsp = int64_t(in.ia.size()),
                nd = int64_t(in.dv.size() / 3);
  auto sx = kjit::from_vector(in.sx), sy = kjit::from_vector(in.sy), sg = kjit::from_vector(in.sg);
  auto out = kjit::zeros<float>({ns}), gx = kjit::zeros<float>({ns}), gy = kjit::zeros<float>({ns});
  auto px = vec3_array(in.px), pg = vec3_array(in.pg), ia = kjit::from_vector(in.ia), ib = kjit::from_vector(in.ib),
       rest = kjit::from_vector(in.rest);
  auto f = kjit::zeros<kjit::vec3f>({np}), gpx = kjit::zeros<kjit::vec3f>({np});
  auto dv = vec3_array(in.dv), dg = vec3_array(in.dg);
  auto dout = kjit::zeros<kjit::vec3f>({nd}), gdv = kjit::zeros<kjit::vec3f>({nd});
  const size_t sb = size_t(ns) * 4, pb = size_t(np) * 12, db = size_t(nd) * 12;

  std::map<std::string, Case> cases;
  cases["saxpy_fwd"] = {[&] { kjit::launch(saxpy, ns, sx, sy, kSaxpyA, out); }, [&] { zero(out, sb); },
                        {{out.data(), sb}}};
  cases["saxpy_adj"] = {[&] { kjit::launch_adjoint(saxpy, ns, {sx, sy, kSaxpyA, out}, {gx, gy, {}, sg}); },
                        [&] { zero(gx, sb), zero(gy, sb); }, {{gx.data(), sb}, {gy.data(), sb}}};
  cases["springs_fwd"] = {[&] { kjit::launch(springs, nsp, px, ia, ib, rest, kSpringK, f); },
                          [&] { zero(f, pb); }, {{f.data(), pb}}};
  cases["springs_adj"] = {[&] {
                            kjit::launch_adjoint(springs, nsp, {px, ia, ib, rest, kSpringK, f},
                                                 {gpx, {}, {}, {}, {}, pg});
                          },
                          [&] { zero(gpx, pb); }, {{gpx.data(), pb}}};
  cases["damp_fwd"] = {[&] { kjit::launch(damp, nd, dv, kDampC, kDampSteps, dout); }, [&] { zero(dout, db); },
                       {{dout.data(), db}}};
  cases["damp_adj"] = {[&] { kjit::launch_adjoint(damp, nd, {dv, kDampC, kDampSteps, dout}, {gdv, {}, {}, dg}); },
                       [&] { zero(gdv, db); }, {{gdv.data(), db}}};
  // The adjoints with their scalar's gradient asked for too (d/da, d/dc: sums over the threads),
  // for bench/value_adjoint_cost.py; the side-by-side comparison does not run them.
  float da = 0, dc = 0;
  cases["saxpy_adj_da"] = {[&] { kjit::launch_adjoint(saxpy, ns, {sx, sy, kSaxpyA, out}, {gx, gy, &da, sg}); },
                           [&] { zero(gx, sb), zero(gy, sb), da = 0; }, {{gx.data(), sb}, {gy.data(), sb}}};
  cases["damp_adj_dc"] = {[&] { kjit::launch_adjoint(damp, nd, {dv, kDampC, kDampSteps, dout}, {gdv, &dc, {}, dg}); },
                          [&] { zero(gdv, db), dc = 0; }, {{gdv.data(), db}}};
  return serve(cases, [](std::istringstream& line, const std::string& cmd) {
    if (cmd != "size") return false;
    int64_t n = 0;
    int reps = 0;
    line >> n >> reps;
    std::cout << saxpy_launch_ms(n, reps) << std::endl;
    return true;
  });
}

// reverse_ir_differential.cpp — the differential test of the reverse transform: the adjoints it
// builds (codegen's reverse_transform, printed by the scalar printer) against the adjoint
// emitter's (KJIT_REVERSE_IR=0), bit for bit, over random programs of what it covers:
// straight-line ones, ones with branches, ones with loops, and device functions' own adjoints;
// and over kernels of what the random programs hold rarely or never (a struct's fields, print()
// of values, atomic min/max, arrays struct fields hold, a mesh's points).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "checker.hpp"
#include "kjit/codegen/passes.hpp"
#include "kjit/dsl/mesh.hpp"
#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"
#include "temp_cache.hpp"
#include "test_support.hpp"

namespace reverse_ir_kernels {
using namespace kjit::dsl;
KJIT_STRUCT(Body, (Double, mass), (Vec3d, pos), (Vec3d, vel), (Int, id));
KJIT_STRUCT(Step, (Double, dt), (Vec3d, gravity));
KJIT_STRUCT(Holder, (Body, body), (Double, w));
KJIT_MODULE(fuzz_reverse_ir_kernels)

/// A struct's fields read (Extract) and written (Insert) through a struct local, in a branch
/// too, from a struct parameter and an array of structs, and a nested struct's.
KJIT_KERNEL(struct_fields, (Value<Step> p, Value<Holder> h, Array<Body> bodies, Array<Body> out, Array<Double> energy)) {
  Int i = tid();
  Var<Body> b = bodies[i];
  b.pos() += b.vel() * p.dt() + p.gravity() * (0.5 * p.dt() * p.dt());  // Verlet's position step
  b.vel() += p.gravity() * p.dt();
  b.vel().z() *= 0.75 + 0.25 * cos(b.pos().y());  // a component of a field
  b.id() = b.id() * 2;  // an integer field: no adjoint of its own
  If(b.mass() > 1.5, [&] { b.mass() = b.mass() * h.body().pos().z() + h.w(); });
  Var<Holder> g = h;
  g.body().vel() = b.vel() * g.w();
  out[i] = b;
  energy[i] = 0.5 * b.mass() * dot(b.vel(), b.vel()) + b.mass() * b.pos().z() + dot(g.body().vel(), h.body().pos());
}

/// print() of values: a uniform scalar, a vector's lanes, a value in a branch and in a loop;
/// the adjoint prints their adjoints, last first.
KJIT_KERNEL(prints, (Array<Double> x, Double c, Array<Double> out)) {
  Int i = tid();
  Double u = c * 2.0;
  print(u);
  Double y = x[i] * u;
  Vec3d w = Vec3d(y, u, 1.0) * y;
  print(w);
  If(y > 0.0, [&] { print(y); });
  Var<Double> z = y;
  For(0, 2, [&](Int) {
    z = z * c + 0.5;
    print(z);
  });
  out[i] = y * y + dot(w, w) + z;
}

/// atomic_min and atomic_max of scalars and vectors, in a branch too: the value that won
/// takes the element's adjoint.
KJIT_KERNEL(extremes, (Array<Double> x, Array<Vec3d> v, Array<Double> lo, Array<Double> hi, Array<Vec3d> vlo)) {
  Int i = tid();
  atomic_min(lo, 0, x[i] * 2.0);
  atomic_max(hi, i % 2, sin(x[i]) * 3.0);
  atomic_min(vlo, 0, v[i] * x[i]);
  If(x[i] > 0.0, [&] { atomic_max(hi, 2, x[i] * x[i]); });
}
}  // namespace reverse_ir_kernels

/// Arrays that struct fields hold: their adjoint arrays are their own gradient buffers
/// (kj::grad_view; the transform's GradView). A module of their own, built again per side
/// without the kernels above.
namespace reverse_ir_fields {
using namespace kjit::dsl;
KJIT_STRUCT(Cloud, (Array<Vec3d>, pts), (Array<Double>, w), (Array<Double>, sink));
KJIT_STRUCT(Scene, (Cloud, cloud), (Array<Double>, acc), (Double, s));
KJIT_MODULE(fuzz_reverse_ir_fields)

/// A device function given an array: the caller's adjoint array of a field array is its view.
inline const auto squared = func("rir_squared", [](Array<Vec3d> pts, Int i, Double c) { return dot(pts[i], pts[i]) * c; });
/// A device function reading its struct argument's field arrays and adding into another: its
/// own adjoint (adj_<f>; it has one for its value k) adds into and reads their views.
inline const auto cloud_weight = func("rir_cloud_weight", [](Value<Cloud> c, Int i, Double k) {
  Double w = c.w()[i] * k;
  atomic_add(c.sink(), i % 2, w * 0.5);
  return w * length(c.pts()[i]);
});

/// A nested struct's field arrays read at the thread's own element and at others', in a branch
/// (the field read there) and in a loop, stored to and added into atomically (add, sub, max),
/// passed to device functions, and an array over an address passed to one (no adjoint array).
KJIT_KERNEL(field_arrays, (Value<Scene> sc, Array<Double> x, UInt64 address, Array<Double> out)) {
  Int i = tid();
  Vec3d p = sc.cloud().pts()[i];
  Var<Double> y = x[i] * sc.s();
  If(y > 0.0, [&] { y = y + sc.cloud().w()[(i + 1) % 5] * p.x(); });
  Var<Double> acc = 0.0;
  For(0, 3, [&](Int k) { acc = acc * 0.5 + sc.cloud().w()[(i + k) % 5] * y; });
  sc.acc()[i] = acc * p.y();
  atomic_add(sc.acc(), 5, y * 2.0);
  atomic_sub(sc.acc(), 6, p.z() * y);
  atomic_max(sc.acc(), 7, p.x() * 3.0 + Double(i));
  out[i] = squared(sc.cloud().pts(), i, y) + cloud_weight(sc.cloud(), i, y) + acc +
           squared(array<Vec3d>(address, 5), (i + 2) % 5, p.z());
}
}  // namespace reverse_ir_fields

/// A mesh's queries with gradients into its points (a Mesh's points are a field array).
namespace reverse_ir_mesh {
using namespace kjit::dsl;
KJIT_MODULE(fuzz_reverse_ir_mesh)

/// The closest point's distance and barycentrics, the face's normal, and a ray's hit.
KJIT_KERNEL(mesh_losses, (Value<Mesh> mesh, Array<Vec3f> pts, Array<Vec3f> dirs, Array<float> out)) {
  Int i = tid();
  Value<MeshQueryPoint> q = mesh_query_point_no_sign(mesh, pts[i], 1.0e6f);
  Vec3f x = mesh_eval_position(mesh, q.face(), q.u(), q.v());
  Vec3f d = x - pts[i];
  Value<MeshQueryRay> r = mesh_query_ray(mesh, pts[i], dirs[i], 1.0e6f);
  out[i] = dot(d, d) + 0.3f * q.u() - 0.7f * q.v() + dot(Vec3f(0.5f, -0.3f, 0.2f), mesh_eval_face_normal(mesh, q.face())) +
           r.t() + 0.4f * r.u() - 0.6f * r.v() + dot(Vec3f(-0.2f, 0.1f, 0.7f), r.normal());
}
}  // namespace reverse_ir_mesh

namespace {

namespace fs = std::filesystem;

/// Every file of `dir` by name, with its bytes.
std::map<std::string, std::string> files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    out[e.path().filename().string()] = bytes.str();
  }
  return out;
}

/// The modules' texts (one per program) that hold an adjoint the reverse transform built.
int transformed(const std::map<std::string, std::string>& texts) {
  int n = 0;
  for (const auto& [name, text] : texts) n += text.find("the reverse transform's adjoint") != std::string::npos;
  return n;
}

/// Of those, the ones whose adjoint holds a loop: the transform's overflow flag is a variable
/// of its own ("kj_ovf0 = true; var3 = true;"), the emitter's kj_overflow.
int transformed_loops(const std::map<std::string, std::string>& texts) {
  const std::regex flag("kj_ovf[0-9]+ = true; var[0-9]+ = true;");
  int n = 0;
  for (const auto& [name, text] : texts) n += std::regex_search(text, flag);
  return n;
}

/// The device functions' own adjoints (adj_<f>) the reverse transform built in the modules'
/// texts: the transform's comment opens their bodies.
int transformed_functions(const std::map<std::string, std::string>& texts) {
  const std::regex adjoint("void adj_kjf_[0-9]+\\(.*\\) \\{\n  // the reverse transform's adjoint");
  int n = 0;
  for (const auto& [name, text] : texts)
    n += int(std::distance(std::sregex_iterator(text.begin(), text.end(), adjoint), std::sregex_iterator()));
  return n;
}

/// The programs a run compares: `count`, or KJIT_REVERSE_IR_DIFF_COUNT's (a longer run by hand).
uint64_t programs(uint64_t count) {
  const char* env = std::getenv("KJIT_REVERSE_IR_DIFF_COUNT");
  return env && *env ? std::strtoull(env, nullptr, 10) : count;
}

/// Generates and runs programs [first, first + count) of `gen` twice on the cpu: once with the
/// adjoints the reverse transform builds, once with KJIT_REVERSE_IR=0 (the adjoint emitter's).
/// Every byte kjit's launches give back (forward and adjoint outputs, the gradients of a, v, m
/// and s) must be the same: the same additions in the same order give the same bits. At
/// least `min_taken` of the programs' adjoints must be the transform's, `min_loops` of them
/// with loops, and at least `min_functions` device functions' own adjoints.
void compare(const fuzz::GenOptions& gen, uint64_t first, uint64_t count, uint64_t min_taken, uint64_t min_loops = 0,
             uint64_t min_functions = 0) {
  fuzz::TempCache cache;
  const fs::path root = fs::path(cache.dir()) / "reverse_ir";
  fuzz::CheckOptions o;
  o.gen = gen;
  o.nvrtc = false;
  o.tangents = false;
  o.shrink = false;
  o.opt_level = 1;
  o.jobs = 2;
  std::map<std::string, std::map<std::string, std::string>> texts, values;
  std::map<std::string, fuzz::Summary> runs;
  for (const char* side : {"transform", "emitter"}) {
    kjit::test::ScopedEnv env("KJIT_REVERSE_IR", side == std::string("emitter") ? "0" : "1");
    fuzz::CheckOptions g = o;  // the texts, one module per program
    g.generate_only = true;
    g.batch = 1;
    g.dump_source = (root / side / "source").string();
    fs::create_directories(g.dump_source);
    fuzz::run_seeds(first, count, g);
    texts[side] = files(g.dump_source);
    fuzz::CheckOptions c = o;  // checked, every value read back written
    c.dump_values = (root / side / "values").string();
    fs::create_directories(c.dump_values);
    runs[side] = fuzz::run_seeds(first, count, c);
    values[side] = files(c.dump_values);
    MESSAGE((std::string(side) + ": " + runs[side].line()));
  }
  // The switch works: the transform's side has its adjoints, the emitter's none.
  const int taken = transformed(texts["transform"]);
  MESSAGE(taken << " of " << count << " programs' adjoints built by the reverse transform");
  CHECK(transformed(texts["emitter"]) == 0);
  CHECK(taken >= int(min_taken));
  const int loops = transformed_loops(texts["transform"]);
  MESSAGE(loops << " of them with loops");
  CHECK(loops >= int(min_loops));
  const int functions = transformed_functions(texts["transform"]);
  MESSAGE(functions << " device functions' own adjoints built by the reverse transform");
  CHECK(transformed_functions(texts["emitter"]) == 0);
  CHECK(functions >= int(min_functions));
  CHECK(runs["transform"].failures == 0);
  CHECK(runs["transform"].passed > int(count) / 2);
  // Every program's values, byte for byte.
  REQUIRE(values["transform"].size() == count);
  REQUIRE(values["emitter"].size() == count);
  int identical = 0;
  for (const auto& [name, bytes] : values["transform"]) {
    INFO(name);
    CHECK(values["emitter"].count(name) == 1);
    const bool same = values["emitter"][name] == bytes;
    CHECK(same);
    identical += same;
  }
  MESSAGE(identical << " of " << count << " programs' values identical");
}

/// The adjoint the reverse transform builds of `kernel`, or of `function` (a device function it
/// calls, "device function <name>"), as IR text ("" where it builds none).
std::string transformed(const kjit::KernelDef& kernel, const std::string& function = "") {
  for (const kjit::codegen::PassSnapshot& s : kjit::codegen::pass_snapshots({&kernel.ir()}, {}))
    if (s.pass == "reverse_transform" && (function.empty() ? s.function.rfind("kernel ", 0) == 0 : s.function == function))
      return s.ir;
  return "";
}

/// What `run` gives back (its launches' bytes, what they printed) with the adjoints of
/// fuzz_reverse_ir_kernels the reverse transform builds, and with the adjoint emitter's: the
/// module is built again for each (an options change, undone, makes it stale).
std::map<std::string, std::string> both_sides(const std::function<std::string()>& run,
                                              const char* module = "fuzz_reverse_ir_kernels") {
  kjit::ModuleDef& m = kjit::module(module);
  std::map<std::string, std::string> out;
  for (const char* side : {"transform", "emitter"}) {
    kjit::test::ScopedEnv env("KJIT_REVERSE_IR", side == std::string("emitter") ? "0" : "1");
    kjit::ModuleOptions o = m.options(), stale = o;
    o.opt_level = 1;
    stale.opt_level = 0;
    m.set_options(stale);
    m.set_options(o);
    out[side] = run();
  }
  return out;
}

/// The bytes of `values`.
template <class T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

}  // namespace

TEST_CASE("the reverse transform's adjoints of kernels with struct fields, prints and atomic min/max, bit for bit") {
  using namespace reverse_ir_kernels;
  const int n = 5;  // the scalar body (no dense block of 16 for the cpu's lane functions)
  std::vector<double> xs;
  for (int i = 0; i < n; ++i) xs.push_back(0.3 + 0.41 * i - 0.9 * (i % 2));  // distinct: one winner per element
  SUBCASE("a struct's fields") {
    const std::string ir = transformed(struct_fields.def());
    CHECK(ir.find("call_adjoint extract.mass ") != std::string::npos);  // a field's adjoint into its struct's
    CHECK(ir.find("call_adjoint extract.body ") != std::string::npos);
    const auto sides = both_sides([&] {
      std::vector<Body> in(n);
      for (int i = 0; i < n; ++i)
        in[size_t(i)] = Body{1.0 + 0.3 * i, kjit::vec3d{{0.1 * i, -0.2, xs[size_t(i)]}}, kjit::vec3d{{0.5, 1.0 - 0.3 * i, -0.4}}, 10 * i};
      const Step p{0.1, kjit::vec3d{{0, -9.8, 0.25}}};
      const Holder h{Body{2.0, kjit::vec3d{{1.0, 2.0, 0.75}}, kjit::vec3d{{0.0, 0.5, 1.0}}, 3}, 1.5};
      kjit::NdArray bodies = kjit::from_vector(in), out = kjit::zeros<Body>({n}), energy = kjit::zeros<double>({n});
      kjit::launch(struct_fields, n, p, h, bodies, out, energy);
      std::vector<Body> w_out(n);
      for (int i = 0; i < n; ++i)
        w_out[size_t(i)] = Body{0.5 + i, kjit::vec3d{{1.0, -0.5, 0.25 * i}}, kjit::vec3d{{0.3, 0.2, -0.1}}, 0};
      kjit::NdArray g_bodies = kjit::zeros<Body>({n}), g_out = kjit::from_vector(w_out);
      kjit::NdArray g_energy = kjit::from_vector(std::vector<double>{1.0, -2.0, 0.5, 3.0, 1.25});
      kjit::NdArray g_p = kjit::zeros<Step>({1}), g_h = kjit::zeros<Holder>({1});
      kjit::launch_adjoint(struct_fields, n, {p, h, bodies, out, energy}, {g_p, g_h, g_bodies, g_out, g_energy});
      std::string bytes = bytes_of(energy.to_vector<double>());
      for (const Body& b : g_bodies.to_vector<Body>()) bytes += bytes_of(std::vector<Body>{b}).substr(0, offsetof(Body, id));
      const Step gp = g_p.to_vector<Step>()[0];
      const Holder gh = g_h.to_vector<Holder>()[0];
      bytes += bytes_of(std::vector<double>{gp.dt, gp.gravity.c[0], gp.gravity.c[1], gp.gravity.c[2], gh.w, gh.body.mass,
                                            gh.body.pos.c[0], gh.body.pos.c[1], gh.body.pos.c[2], gh.body.vel.c[0],
                                            gh.body.vel.c[1], gh.body.vel.c[2]});
      return bytes;
    });
    CHECK(sides.at("transform").size() == sides.at("emitter").size());
    CHECK(sides.at("transform") == sides.at("emitter"));
  }
  SUBCASE("print() of values") {
    CHECK(transformed(prints.def()).find("call_adjoint print ") != std::string::npos);
    const auto sides = both_sides([&] {
      kjit::NdArray x = kjit::from_vector(xs), out = kjit::zeros<double>({n});
      kjit::test::capture_stdout([&] { kjit::launch(prints, n, x, 0.75, out); });
      kjit::NdArray gx = kjit::zeros<double>({n}), gout = kjit::from_vector(std::vector<double>{1.0, -0.5, 2.0, 0.25, 1.5});
      double gc = 0.0;
      std::string text = kjit::test::capture_stdout([&] { kjit::launch_adjoint(prints, n, {x, 0.75, out}, {gx, &gc, gout}); });
      // The threads' lines may interleave in any order: compared sorted.
      std::vector<std::string> lines;
      for (size_t a = 0, b; (b = text.find('\n', a)) != std::string::npos; a = b + 1) lines.push_back(text.substr(a, b - a));
      std::sort(lines.begin(), lines.end());
      std::string all;
      for (const std::string& l : lines) all += l + "\n";
      return all + bytes_of(gx.to_vector<double>()) + bytes_of(std::vector<double>{gc});
    });
    CHECK(sides.at("transform").find("adj (") != std::string::npos);  // the vector's adjoints were printed
    CHECK(sides.at("transform") == sides.at("emitter"));
  }
  SUBCASE("atomic min/max") {
    CHECK(transformed(extremes.def()).find("call_adjoint atomic ") != std::string::npos);
    const auto sides = both_sides([&] {
      std::vector<kjit::vec3d> vs;
      for (int i = 0; i < n; ++i) vs.push_back(kjit::vec3d{{0.5 - 0.2 * i, 0.1 * i * i, 1.0 + 0.3 * i}});
      kjit::NdArray x = kjit::from_vector(xs), v = kjit::from_vector(vs);
      kjit::NdArray lo = kjit::from_vector(std::vector<double>{10.0}), hi = kjit::from_vector(std::vector<double>{-10.0, -10.0, -10.0});
      kjit::NdArray vlo = kjit::from_vector(std::vector<kjit::vec3d>{kjit::vec3d{{10.0, 10.0, 10.0}}});
      kjit::launch(extremes, n, x, v, lo, hi, vlo);
      kjit::NdArray gx = kjit::zeros<double>({n}), gv = kjit::zeros<kjit::vec3d>({n});
      kjit::NdArray glo = kjit::from_vector(std::vector<double>{1.5}), ghi = kjit::from_vector(std::vector<double>{0.5, -2.0, 3.0});
      kjit::NdArray gvlo = kjit::from_vector(std::vector<kjit::vec3d>{kjit::vec3d{{1.0, 2.0, -1.0}}});
      kjit::launch_adjoint(extremes, n, {x, v, lo, hi, vlo}, {gx, gv, glo, ghi, gvlo});
      return bytes_of(gx.to_vector<double>()) + bytes_of(gv.to_vector<kjit::vec3d>()) + bytes_of(glo.to_vector<double>()) +
             bytes_of(ghi.to_vector<double>()) + bytes_of(gvlo.to_vector<kjit::vec3d>());
    });
    CHECK(sides.at("transform") == sides.at("emitter"));
  }
}

TEST_CASE("the reverse transform's adjoints are the adjoint emitter's, bit for bit") {
  fuzz::GenOptions gen;
  SUBCASE("straight-line programs") {
    // No branch, loop, jump or device function (what its first increment covered); atomic
    // min/max among them. The transform takes every one (seeds 1..600: 600).
    gen.straight_line = true;
    const uint64_t count = programs(24);
    compare(gen, 700001, count, count);
  }
  SUBCASE("programs with branches and device function calls") {
    // Nested branches with else sides, variables stored in them, returns (lowered to flags
    // and branches), device function calls (custom gradients among them), atomic min/max; no
    // loop. The transform takes every one (seeds 1..600: 600).
    gen.loops = false;
    const uint64_t count = programs(24);
    compare(gen, 710001, count, count);
  }
  SUBCASE("device functions' own adjoints") {
    // Programs of device function calls (their adjoints adj_<f>, which the kernels' adjoints
    // call): functions of values and vectors, with an early return (lowered to flags) and with
    // a loop (checkpointed in the function's adjoint); those with a user gradient keep it. Of
    // seeds 1..600 of the default programs the transform built 478 functions' adjoints, every
    // one without a user gradient; of these 16, 17.
    const uint64_t count = programs(16);
    compare(gen, 730001, count, count / 2, 0, count / 2);
  }
  SUBCASE("programs with loops") {
    // The default programs: For and While loops, nested, with variables carried across
    // iterations (checkpointed), branches, jumps (lowered to flags) and calls inside. The
    // transform takes every one with an adjoint (seeds 1..600: 589; 11 are refused, a store
    // overwritten in a loop).
    const uint64_t count = programs(16);
    compare(gen, 720001, count, count * 15 / 16, count / 8);
  }
}

TEST_CASE("the reverse transform's adjoints of kernels with arrays in struct fields, bit for bit") {
  const int n = 5;  // the scalar body (no dense block of 16 for the cpu's lane functions)
  SUBCASE("a nested struct's field arrays, in a branch, a loop, atomics and device functions") {
    using namespace reverse_ir_fields;
    const std::string ir = transformed(field_arrays.def());
    CHECK(ir.find(" = grad_view %") != std::string::npos);
    CHECK(ir.find("call_adjoint atomic ") != std::string::npos);  // atomic_max into a field array
    CHECK(ir.find("call_adjoint adj_rir_cloud_weight ") != std::string::npos);
    CHECK(transformed(field_arrays.def(), "device function rir_cloud_weight").find(" = grad_view %") != std::string::npos);
    const auto sides = both_sides(
        [&] {
          std::vector<kjit::vec3d> ps;
          std::vector<double> ws, xs;
          for (int i = 0; i < n; ++i) {
            ps.push_back(kjit::vec3d{{0.5 - 0.25 * i, 0.125 * i * i - 0.3, 1.0 + 0.375 * i}});
            ws.push_back(0.75 - 0.5 * i + 0.1 * (i % 2));
            xs.push_back(0.3 + 0.41 * i - 0.9 * (i % 2));
          }
          kjit::NdArray pts = kjit::from_vector(ps).requires_grad(), w = kjit::from_vector(ws).requires_grad();
          kjit::NdArray acc = kjit::zeros<double>({8}).requires_grad(), other = kjit::from_vector(ps);
          kjit::NdArray sink = kjit::zeros<double>({2}).requires_grad();
          acc.fill(-5.0);
          Scene sc;
          sc.cloud.pts = pts;
          sc.cloud.w = w;
          sc.cloud.sink = sink;
          sc.acc = acc;
          sc.s = 1.25;
          const uint64_t address = uint64_t(reinterpret_cast<uintptr_t>(other.data()));
          kjit::NdArray x = kjit::from_vector(xs), out = kjit::zeros<double>({n});
          kjit::launch(field_arrays, n, sc, x, address, out);
          // The gradients the adjoint reads out of acc (stores, atomics), what flows back into out.
          const std::vector<double> g_acc = {1.0, -0.5, 2.0, 0.25, 1.5, 0.75, -1.25, 3.0};
          std::copy(g_acc.begin(), g_acc.end(), static_cast<double*>(acc.grad().data()));
          static_cast<double*>(sink.grad().data())[0] = 0.5;
          static_cast<double*>(sink.grad().data())[1] = -1.5;
          kjit::NdArray gx = kjit::zeros<double>({n}), gsc = kjit::zeros<Scene>({1});
          kjit::NdArray gout = kjit::from_vector(std::vector<double>{1.0, -2.0, 0.5, 3.0, 1.25});
          kjit::launch_adjoint(field_arrays, n, {sc, x, address, out}, {gsc, gx, uint64_t(0), gout});
          return bytes_of(out.to_vector<double>()) + bytes_of(acc.to_vector<double>()) + bytes_of(w.to_vector<double>()) +
                 bytes_of(gx.to_vector<double>()) + bytes_of(std::vector<double>{gsc.to_vector<Scene>()[0].s}) +
                 bytes_of(pts.grad().to_vector<kjit::vec3d>()) + bytes_of(w.grad().to_vector<double>()) +
                 bytes_of(acc.grad().to_vector<double>()) + bytes_of(sink.to_vector<double>()) +
                 bytes_of(sink.grad().to_vector<double>());
        },
        "fuzz_reverse_ir_fields");
    CHECK(sides.at("transform") == sides.at("emitter"));
  }
  SUBCASE("a mesh's closest-point and ray queries, gradients into its points") {
    using namespace reverse_ir_mesh;
    CHECK(transformed(mesh_losses.def()).find(" = grad_view %") != std::string::npos);
    const auto sides = both_sides(
        [&] {
          // An octahedron: the points on the axes, eight faces.
          const std::vector<kjit::vec3f> corners = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
          const std::vector<int> faces = {0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5};
          kjit::NdArray points = kjit::from_vector(corners).requires_grad();
          kjit::Mesh mesh(points, kjit::from_vector(faces));
          std::vector<kjit::vec3f> ps, ds;
          for (int i = 0; i < n; ++i) {
            ps.push_back(kjit::vec3f(1.5f - 0.6f * float(i), 0.4f + 0.3f * float(i % 3), 1.1f - 0.45f * float(i)));
            ds.push_back(kjit::vec3f(-ps.back().c[0], -ps.back().c[1] + 0.1f, -ps.back().c[2]));
          }
          kjit::NdArray pts = kjit::from_vector(ps), dirs = kjit::from_vector(ds), out = kjit::zeros<float>({n});
          kjit::launch(mesh_losses, n, mesh, pts, dirs, out);
          kjit::NdArray gpts = kjit::zeros<kjit::vec3f>({n}), gdirs = kjit::zeros<kjit::vec3f>({n});
          kjit::NdArray gout = kjit::from_vector(std::vector<float>{1.0f, -0.5f, 2.0f, 0.25f, 1.5f});
          kjit::launch_adjoint(mesh_losses, n, {mesh, pts, dirs, out}, {{}, gpts, gdirs, gout});
          const std::vector<kjit::vec3f> gm = points.grad().to_vector<kjit::vec3f>();
          bool any = false;
          for (const kjit::vec3f& g : gm) any = any || g.c[0] != 0 || g.c[1] != 0 || g.c[2] != 0;
          CHECK(any);  // the points' gradients were reached
          return bytes_of(out.to_vector<float>()) + bytes_of(gpts.to_vector<kjit::vec3f>()) +
                 bytes_of(gdirs.to_vector<kjit::vec3f>()) + bytes_of(gm);
        },
        "fuzz_reverse_ir_mesh");
    CHECK(sides.at("transform") == sides.at("emitter"));
  }
}

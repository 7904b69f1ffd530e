// Every kjit spelling in docs/DSL.md's "Warp -> kjit" table, in kernels as a Warp user writes
// them: this file must compile warning-free, so the table cannot promise a spelling that does
// not exist. Each construct is marked with its table row in a comment.
#include <kjit/kjit.hpp>
#include <tuple>
namespace snippet {
using namespace kjit::dsl;

constexpr float kGravity = -9.8f;                       // wp.constant
KJIT_STRUCT(Particle, (Float, mass), (Vec3f, pos));     // @wp.struct
using vec5f = kjit::vec<5, float>;                      // wp.types.vector(length=5, dtype=float)
using mat23d = kjit::mat<2, 3, double>;                 // wp.types.matrix(shape=(2, 3), dtype=float64)

inline Float helper(Float x) { return x * x; }          // plain helper: inlined
inline const auto spring = func("spring", [](auto d, auto k) { return d * k; });  // @wp.func, generic (Any)
inline const auto two = func("two", [](Float x) { return std::make_tuple(x, x * 2.0f); });  // return a, b
inline const auto safe = func("safe", [](Float x) { return sqrt(x); })             // @wp.func_grad
    .grad([](Float x, Float adj_ret, auto& adj_x) { adj_x += adj_ret * 0.5f / max(sqrt(x), 1e-6f); })
    .replay([](Float x) { return sqrt(x); });                                       // @wp.func_replay

KJIT_KERNEL(warp_spellings, (Array<Float> x, Array<Vec3f> v, Array<Float, 2> grid, Array<Particle> ps,
                             Array<Int> counts, Array<Mat33f> ms, Array<vec5f> fives, Array<mat23d> wides,
                             Float scale, Int n)) {
  Int i = tid();                                        // i = wp.tid()
  Float a = x[i];                                       // a = x[i]
  Var<Float> acc = 0.0f;                                // acc = float(0.0), assigned in loops
  acc += a * scale;                                     // acc += ...
  Float b = grid(i, 0) + grid(i, 1);                    // grid[i, j]
  Int rows = grid.shape[0], cols = grid.shape[1];       // grid.shape[0]
  Int m = len(x) + rows * cols + grid.ndim;             // len(x), grid.ndim
  Float c = Float(i) + Float(m);                        // float(i)
  Double d = Double(a);                                 // wp.float64(a)
  Int k = Int(a);                                       // int(a)
  Vec3f p = v[i];                                       // p = v[i]
  Float px = p.x() + p[1];                              // p.x, p[1]
  Var<Vec3f> q = p;
  q.y() = 2.0f;                                         // q.y = 2.0
  q[2] += px;                                           // q[2] += px
  Vec3f made = Vec3f(1.0f, 2.0f, 3.0f) + vector(a, b, c) + Vec3f(0.0f);  // wp.vec3(...), wp.vector(...)
  Mat33f M = ms[i];
  Vec3f mv = M * p;                                     // M @ p, wp.mul(M, p)
  Vec3f vm = p * M;                                     // p @ M, wp.mul(p, M)
  Float e = M(0, 1) + M[1][2];                          // M[0, 1], M[1][2]
  Vec3f row = M[0];                                     // M[0]
  Mat33f MM = M * M;                                    // wp.mul(M, M)
  Mat22f small = Mat22f(a, b, c, px);                   // wp.mat22(a, b, c, d)
  Vec2f head = Vec2f(p.x(), p.y());                     // instead of p[0:2]
  Vec3d pd = cast<double>(p);                           // wp.vec3d(p)
  Quatf rot = quat_from_axis_angle(Vec3f(0.0f, 0.0f, 1.0f), a);
  Quatf turned = rot * rot;                             // q * r
  expect_near(a, a);                                    // (instead of assert)
  Value<vec5f> five = fives[i];
  Value<mat23d> wide = wides[i];
  Value<kjit::vec<3, double>> w3 = Value<kjit::vec<2, double>>(d, d) * wide;
  Float power = pow(a, 2.0f);                           // a ** 2.0
  Int fdiv = floordiv(k, 3);                            // k // 3
  Int modulo = k % 3;                                   // k % 3
  Float chosen = where(a > 0.0f, a, -a);                // a if a > 0.0 else -a
  Bool both = (a > 0.0f && !(b < 0.0f)) || c == 1.0f;   // and, not, or
  Bool between = 0.0f < a && a < 1.0f;                  // 0.0 < a < 1.0
  If(both, [&] {                                        // if / elif / else
    acc = acc + 1.0f;
  }).ElseIf(between, [&] {
    acc = acc - 1.0f;
  }).Else([&] {
    acc = acc * 2.0f;
  });
  For(0, n, [&](Int j) {                                // for j in range(n)
    If(j == 3, [&] { Continue(); });                    // continue
    If(j > 5, [&] { Break(); });                        // break
    acc += x[j % len(x)];
  });
  For(n, 0, -2, [&](Int j) { acc += Float(j); });       // for j in range(n, 0, -2)
  for (int u = 0; u < 3; ++u) acc += Float(u) * a;      // wp.static loop: unrolled at trace time
  Var<Int> it = 0;
  While([&] { return it < 3; }, [&] { it += 1; });      // while it < 3
  auto [t0, t1] = two(a);                               // t0, t1 = two(a)
  Vec3f f = spring(p, scale) + made + mv + vm + row;
  Var<Particle> part = ps[i];
  part.pos() += Vec3f(0.0f, kGravity, 0.0f) * part.mass();  // s.pos += ...
  ps[i] = part;
  atomic_add(counts, 0, 1);                             // wp.atomic_add(counts, 0, 1)
  counts[1] += 1;                                       // counts[1] += 1 (atomic)
  auto local = zeros<Float, 4>();                       // wp.zeros(4, dtype=float) in a kernel
  local[0] = helper(a) + safe(a * a);
  print(f);                                             // print(f)
  printf("%d\n", i);                                    // wp.printf("%d\n", i)
  If(a < 0.0f, [&] { Return(); });                      // return (early)
  e = e + MM(0, 0) + small(1, 1) + head.y() + Float(pd.x()) + turned.w();
  v[i] = f + q + Vec3f(local[0] + acc + t0 + t1 + e + power + chosen + five[4] + Float(w3.x()),
                       Float(fdiv + modulo + it), Float(d));
}
}  // namespace snippet

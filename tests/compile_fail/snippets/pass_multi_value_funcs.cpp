// Device functions that return several values (issue 17, item 4): std::tuple, std::pair,
// dsl::Tuple and a struct of DSL values, with structured bindings at the call; a user
// adjoint (adj_ret as a tuple) and a replay.
#include <kjit/dsl.hpp>
#include <tuple>
#include <utility>
namespace snippet {
using namespace kjit::dsl;
struct Hit {
  Float t;
  Vec3f normal;
  Int id;
};
inline const auto tuple2 = func("tuple2", [](auto x) { return std::make_tuple(x * 2.0f, x * x); });
inline const auto pair2 = func("pair2", [](Float x, Int n) { return std::make_pair(x, n + 1); });
inline const auto own3 = func("own3", [](Float x) { return Tuple<Float, Vec2f, Int>{x, Vec2f(x, x), Int(1)}; });
inline const auto hit = func("hit", [](Vec3f o, Vec3f d) { return Hit{dot(o, d), normalize(d), Int(7)}; });
inline const auto custom = func("custom", [](Float x) { return std::make_tuple(sin(x), cos(x)); })
    .grad([](Float x, auto adj_ret, auto& adj_x) {
      auto [adj_s, adj_c] = adj_ret;
      adj_x += adj_s * cos(x) - adj_c * sin(x);
    })
    .replay([](Float x) { return std::make_tuple(sin(x), cos(x)); });
KJIT_KERNEL(multi_value_funcs, (Array<Float> x, Array<Vec3f> v, Array<Float> out)) {
  Int i = tid();
  auto [a, b] = tuple2(x[i]);
  auto [c, n] = pair2(a, i);
  auto [d, e, m] = own3(b);
  auto [t, normal, id] = hit(v[i], v[i] + Vec3f(1.0f));
  std::tuple<Float, Float> kept = custom(c);
  Hit h = hit(v[i], normal);
  out[i] = a + b + c + d + e.x() + t + normal.y() + std::get<0>(kept) + h.t + Float(n + m + id + h.id);
}
}  // namespace snippet

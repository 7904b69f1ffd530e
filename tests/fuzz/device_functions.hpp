// device_functions.hpp — the device functions generated programs call, with and without a
// custom gradient or tangent (each is the exact derivative, so results must agree).
// printer.cpp prints the same definitions into a repro; keep the two in step.
#pragma once

#include "kjit/kjit.hpp"

namespace fuzz::fns {
using namespace kjit::dsl;

inline const auto fz_mix = func("fz_mix", [](auto x, auto y) { return x * sin(y) + y; });
inline const auto fz_mix_g = func("fz_mix_g", [](auto x, auto y) { return x * sin(y) + y; })
    .grad([](auto x, auto y, auto adj_ret, auto& adj_x, auto& adj_y) {
      adj_x += adj_ret * sin(y);
      adj_y += adj_ret * (x * cos(y) + 1.0);
    });
inline const auto fz_vscale = func("fz_vscale", [](auto u, auto t) { return u * tanh(t) + u; });
inline const auto fz_soft_g = func("fz_soft_g", [](auto x) { return sqrt(x * x + 1.0); })
    .grad([](auto x, auto adj_ret, auto& adj_x) { adj_x += adj_ret * x / sqrt(x * x + 1.0); })
    .jvp([](auto x, auto dx) { return dx * x / sqrt(x * x + 1.0); });
inline const auto fz_gather_g = func("fz_gather_g", [](auto a, auto i, auto x) { return a[i] * x; })
    .grad([](auto a, auto i, auto x, auto adj_ret, auto& adj_a, auto&, auto& adj_x) {
      atomic_add(adj_a, i, adj_ret * x);
      adj_x += adj_ret * a[i];
    });
inline const auto fz_loop = func("fz_loop", [](auto x, auto n) {
  Var<Double> y = x;
  For(0, n % 4, [&](Int) { y = y * 0.9 + sin(y) * 0.1; });
  return Double(y);
});
/// Returns early from inside its loop and from a branch after it (Warp's return anywhere).
inline const auto fz_early = func("fz_early", [](auto x, auto n) {
  Var<Double> y = x;
  For(0, n % 4, [&](Int j) {
    y = y * 0.9 + sin(y) * 0.1;
    If(y > 0.8, [&] { Return(y * 2.0 - Double(j)); });
  });
  If(y < -1.5, [&] { Return(y * 0.1 - 1.35); });
  return Double(y);
});

inline const auto fz_wrong_g = func("fz_wrong_g", [](auto x) { return x * x; })
    .grad([](auto x, auto adj_ret, auto& adj_x) { adj_x += adj_ret * x; });
inline const auto fz_wrong_t = func("fz_wrong_t", [](auto x) { return x * x; })
    .jvp([](auto x, auto dx) { return dx * x; });

}  // namespace fuzz::fns

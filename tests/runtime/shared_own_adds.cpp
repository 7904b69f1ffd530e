// The reverse sweep's plain adds at each thread's own element: which adjoint arrays codegen
// lists for them, and launches where another argument shares their memory (views of one
// gradient buffer, one array passed twice) giving exact gradients, on the cpu in index order;
// the decision and the flagged descriptors CUDA launches take.
#include <doctest/doctest.h>

#include <vector>

#include "kjit/codegen/codegen.hpp"
#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/internal/private_adds.hpp"
#include "kjit/runtime/internal/shared_arrays.hpp"

using namespace kjit;
using kjit::detail::PrivatizeMode;

namespace so_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_shared_own_adds)

/// Both arrays read at the thread's own element: the adjoint adds into d x and d y plainly.
KJIT_KERNEL(two_own_reads, (Array<Float> x, Array<Float> y, Array<Float> out)) {
  Int i = tid();
  out[i] = x[i] * 2.0f + y[i] * 3.0f;
}
/// x read at its own element, y gathered: d y takes atomic (or privatized) adds beside d x's
/// plain ones.
KJIT_KERNEL(own_and_gathered, (Array<Float> x, Array<Float> y, Array<Int> idx, Array<Float> out)) {
  Int i = tid();
  out[i] = x[i] * 2.0f + y[idx[i]] * 3.0f;
}
/// An array read at its own element but passed to a device function: its adds stay atomic.
inline const auto read_at = func("read_at", [](Array<float> a, Int i) { return a[i]; });
KJIT_KERNEL(through_function, (Array<Float> x, Array<Float> out)) {
  Int i = tid();
  out[i] = x[i] + read_at(x, i);
}
}  // namespace so_tests

namespace {

std::string own_adds_of(const KernelDef& k) { return codegen::describe_kernel(k.ir(), true)["own_adds"].dump(); }

struct ModeScope {
  explicit ModeScope(PrivatizeMode m) { kjit::detail::set_privatize_mode(m); }
  ~ModeScope() { kjit::detail::set_privatize_mode(PrivatizeMode::Auto); }
};

/// Whole numbers below 2^24: every order of the adds gives these sums exactly.
std::vector<float> seed_of(int64_t n) {
  std::vector<float> s(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) s[size_t(i)] = float(i % 7) - 3.0f;
  return s;
}

}  // namespace

TEST_CASE("codegen lists the adjoint arrays the reverse sweep adds into at the thread's own element") {
  using namespace so_tests;
  // Adjoint parameters are numbered after the kernel's: d x is 3, d y 4 (d out is only read).
  CHECK(own_adds_of(two_own_reads.def()) == "[3,4]");
  CHECK(own_adds_of(own_and_gathered.def()) == "[4]");  // d x; d y is a privatizable target
  CHECK(own_adds_of(through_function.def()) == "[]");
  const codegen::GeneratedModule g =
      codegen::generate_module("shared_own_adds", {&two_own_reads.def().ir()}, codegen::CodegenOptions{});
  CHECK(g.text.find("kj::own_add(") != std::string::npos);
}

TEST_CASE("own-element adjoint adds stay exact when another argument shares the gradient's memory") {
  using namespace so_tests;
  const int64_t n = 200003;  // pooled on two cores, a tail that is no lane block
  const std::vector<float> seed = seed_of(n);
  const std::vector<float> ones(static_cast<size_t>(n + 1), 1.0f);

  SUBCASE("separate gradient buffers: plain adds, no fallback") {
    NdArray gx = zeros<float>({n}), gy = zeros<float>({n});
    const uint64_t before = kjit::detail::shared_own_add_launches();
    launch_adjoint(two_own_reads.def(), n, {zeros<float>({n}), zeros<float>({n}), zeros<float>({n})},
                   {gx, gy, from_vector(seed)});
    CHECK(kjit::detail::shared_own_add_launches() == before);
    const auto x = gx.to_vector<float>(), y = gy.to_vector<float>();
    for (int64_t i = 0; i < n; ++i) {
      REQUIRE(x[size_t(i)] == 2.0f * seed[size_t(i)]);
      REQUIRE(y[size_t(i)] == 3.0f * seed[size_t(i)]);
    }
  }
  SUBCASE("views of one gradient buffer, one element apart") {
    NdArray a = from_vector(ones), g = zeros<float>({n + 1});
    const uint64_t before = kjit::detail::shared_own_add_launches();
    launch_adjoint(two_own_reads.def(), n, {a.slice(0, n), a.slice(1, n + 1), zeros<float>({n})},
                   {g.slice(0, n), g.slice(1, n + 1), from_vector(seed)});
    CHECK(kjit::detail::shared_own_add_launches() == before + 1);
    const auto got = g.to_vector<float>();
    for (int64_t k = 0; k <= n; ++k) {
      const float want = (k < n ? 2.0f * seed[size_t(k)] : 0.0f) + (k >= 1 ? 3.0f * seed[size_t(k - 1)] : 0.0f);
      REQUIRE(got[size_t(k)] == want);
    }
  }
  SUBCASE("one gradient buffer passed twice") {
    NdArray g = zeros<float>({n});
    const uint64_t before = kjit::detail::shared_own_add_launches();
    launch_adjoint(two_own_reads.def(), n, {zeros<float>({n}), zeros<float>({n}), zeros<float>({n})},
                   {g, g, from_vector(seed)});
    CHECK(kjit::detail::shared_own_add_launches() == before + 1);
    const auto got = g.to_vector<float>();
    for (int64_t i = 0; i < n; ++i) REQUIRE(got[size_t(i)] == 5.0f * seed[size_t(i)]);
  }
  SUBCASE("own adds beside gathered adds into the same buffer, every privatization mode") {
    std::vector<int32_t> idx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) idx[size_t(i)] = int32_t((i * 7919) % n);
    for (PrivatizeMode mode : {PrivatizeMode::Never, PrivatizeMode::Always, PrivatizeMode::Auto}) {
      CAPTURE(int(mode));
      ModeScope scope(mode);
      NdArray g = zeros<float>({n});
      const uint64_t before = kjit::detail::shared_own_add_launches();
      launch_adjoint(own_and_gathered.def(), n,
                     {zeros<float>({n}), zeros<float>({n}), from_vector(idx), zeros<float>({n})},
                     {g, g, {}, from_vector(seed)});
      CHECK(kjit::detail::shared_own_add_launches() == before + 1);
      std::vector<float> want(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        want[size_t(i)] += 2.0f * seed[size_t(i)];
        want[size_t(idx[size_t(i)])] += 3.0f * seed[size_t(i)];
      }
      CHECK(g.to_vector<float>() == want);
    }
  }
}

TEST_CASE("the sharing decision and the flagged descriptors a CUDA launch takes") {
  using namespace so_tests;
  std::vector<compiler::KernelDescription> described;
  const codegen::GeneratedModule g =
      codegen::generate_module("shared_own_adds", {&two_own_reads.def().ir()}, codegen::CodegenOptions{});
  REQUIRE(compiler::parse_kernel_descriptions(g.kernels, &described) == "");
  const kjit::detail::OwnAdds own = kjit::detail::own_adds_of(described.at(0));
  REQUIRE(own.targets == std::vector<int>{4, 5});  // the bounds are packed parameter 0
  CHECK(own.array_args == std::vector<int>{1, 2, 3, 4, 5, 6});

  std::vector<float> mem(64);
  auto array = [&](int begin, int count, int64_t stride = 4) {
    kj::array_t<void> a{};
    a.data = mem.data() + begin;
    a.ndim = 1;
    a.shape[0] = count;
    a.strides[0] = stride;
    return a;
  };
  kj::launch_bounds_t bounds{};
  kj::array_t<void> x = array(0, 8), y = array(8, 8), out = array(16, 8), dx = array(24, 8), dy = array(32, 8),
                    dout = array(40, 8);
  void* params[] = {&bounds, &x, &y, &out, &dx, &dy, &dout};
  CHECK_FALSE(own.shared(params));
  dy = array(31, 8);  // one element into d x
  CHECK(own.shared(params));
  dy = array(39, 9, -4);  // backwards, from its last element down to d x's last
  CHECK(own.shared(params));
  dy = array(47, 0);  // empty: overlaps nothing
  CHECK_FALSE(own.shared(params));
  dy = array(24, 8);  // the same buffer as d x

  kjit::detail::FlaggedArrays flagged(params, own.param_count, own.targets.size());
  CHECK(flagged.params() == params);  // nothing flagged: the launch's own parameters
  for (int t : own.targets)
    if (kjit::detail::shares_memory(own.array_args, params, t)) flagged.flag(t, kj::kArrayShared);
  void** p = flagged.params();
  REQUIRE(p != params);
  CHECK(static_cast<kj::array_t<void>*>(p[4])->flags == kj::kArrayShared);
  CHECK(static_cast<kj::array_t<void>*>(p[5])->flags == kj::kArrayShared);
  CHECK(static_cast<kj::array_t<void>*>(p[4])->data == dx.data);
  CHECK(p[1] == params[1]);
  CHECK(dx.flags == 0);  // the packed descriptors (what a captured graph replays) are untouched
  CHECK(dy.flags == 0);
}

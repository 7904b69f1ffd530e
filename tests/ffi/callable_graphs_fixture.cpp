// The graph-mode tests' callables, buffers, sessions and record views (see the header).
#include "callable_graphs_fixture.hpp"

#include <optional>

#include <doctest/doctest.h>

#include "saxpy.hpp"

namespace kjit::test::graphs {

namespace {

/// out = a x + y (a kernel), and x_copy = x (a copy on the stream): the copy really moves bytes
/// through the fake driver, so the tests see data flow through staging buffers and replays.
void step(const ffi::CallContext& ctx) {
  const NdArray& x = ctx.array("x");
  ctx.launch(demo::saxpy, x.shape(0), {x, ctx.arg("y"), ctx.arg("a"), ctx.array("out")});
  NdArray copy = ctx.array("x_copy");
  copy.copy_from(x, ctx.stream());
}

std::vector<KernelParam> step_params() {
  return ffi::params<dsl::Array<float>, dsl::Array<float>, dsl::Float, dsl::Array<float>, dsl::Array<float>>(
      {"x", "y", "a", "out", "x_copy"});
}

ffi::CallableOptions options(std::optional<std::vector<std::string>> in = std::nullopt,
                             std::optional<std::vector<std::string>> out = std::nullopt) {
  ffi::CallableOptions o;
  o.graph_mode = ffi::GraphMode::Kjit;
  o.preload_kernels = {"demo::saxpy"};
  o.stage_in = std::move(in);
  o.stage_out = std::move(out);
  return o;
}

const ffi::CallableRegistration g_step("graphs::step", step_params(), step, options());
const ffi::CallableRegistration g_step_x_only("graphs::step_x_only", step_params(), step,
                                              options(std::vector<std::string>{"x"},
                                                      std::vector<std::string>{"x_copy"}));

std::vector<float> iota(float seed, int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = seed + float(i);
  return v;
}

}  // namespace

Buffers::Buffers(const Device& d, float seed, int n)
    : x(NdArray::from_vector(iota(seed, n), {n}, d)),
      y(NdArray::from_vector(std::vector<float>(size_t(n), 1.f), {n}, d)),
      out(NdArray::zeros(ir_type_of<float>(), {n}, d)),
      x_copy(NdArray::zeros(ir_type_of<float>(), {n}, d)) {}

void Buffers::fill(float seed) {
  x.copy_from(NdArray::from_vector(iota(seed, int(x.shape(0))), {x.shape(0)}, x.device()));
}

Session::Session(const std::string& callable, ffi::GraphMode mode, int ordinal) : callable_(callable) {
  use_fake_devices();
  device = Device::cuda(ordinal);
  stream = Stream::create(device);
  set_execution_context(stream.handle(), ordinal);
  handler = ffi::callable_handler(callable, mode, ffi::Platform::Cuda);
  REQUIRE(reinterpret_cast<void*>(handler) != nullptr);
  ffi::clear_graph_cache(callable);
}

Session::~Session() {
  ffi::clear_graph_cache(callable_);
  set_execution_context(nullptr, 0);
}

Outcome Session::call(const Buffers& b, float a) {
  FrameBuilder f;
  const int64_t n = b.x.shape(0);
  f.arg(xla::kF32, {n}, b.x.data()).arg(xla::kF32, {n}, b.y.data());
  f.ret(xla::kF32, {n}, b.out.data()).ret(xla::kF32, {n}, b.x_copy.data());
  f.attr_scalar("a", xla::kF32, a);
  return kjit::test::call(handler, f.frame());
}

void Records::reset() {
  calls_ = fake_cuda::calls().size();
  launches_ = fake_cuda::launches().size();
  copies_ = fake_cuda::copies().size();
}

std::vector<fake_cuda::LaunchRecord> Records::launches() const {
  auto all = fake_cuda::launches();
  return {all.begin() + long(launches_), all.end()};
}

std::vector<fake_cuda::CopyRecord> Records::copies() const {
  auto all = fake_cuda::copies();
  return {all.begin() + long(copies_), all.end()};
}

int Records::count_calls(const std::string& name) const {
  auto all = fake_cuda::calls();
  int n = 0;
  for (size_t i = calls_; i < all.size(); ++i) n += all[i].name == name;
  return n;
}

std::vector<std::string> Records::call_names(const std::string& a, const std::string& b) const {
  auto all = fake_cuda::calls();
  std::vector<std::string> out;
  for (size_t i = calls_; i < all.size(); ++i)
    if (all[i].name == a || all[i].name == b) out.push_back(all[i].name);
  return out;
}

}  // namespace kjit::test::graphs

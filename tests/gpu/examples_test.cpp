// Every example kernel, forward and adjoint, on cuda:0 against the cpu, within the tolerances of
// gpu_support.hpp; and the basic facts of the real driver (default device, targets, limits).
#include <string>
#include "gpu_support.hpp"
#include "kjit/ir/ir.hpp"
#include "kjit/runtime/devices.hpp"
#include "kjit/kernel.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;
using namespace kjit::gpu_test;

namespace {

/// One argument of an example launch: host data for an array, or a value.
struct ArgSpec {
  bool is_array = false;
  ir::Type element;
  Shape shape;
  std::vector<unsigned char> data;
  LaunchArg value;
};

template <class T>
ArgSpec array_of(const std::vector<T>& v) {
  ArgSpec a;
  a.is_array = true;
  a.element = ir_type_of<T>();
  a.shape = {int64_t(v.size())};
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  a.data.assign(p, p + v.size() * sizeof(T));
  return a;
}

template <class T>
ArgSpec value_of(T v) {
  ArgSpec a;
  a.value = LaunchArg(v);
  return a;
}

template <class T>
std::vector<vec<3, T>> random_vec3(size_t n, double lo, double hi, unsigned seed) {
  auto flat = random_values<T>(3 * n, lo, hi, seed);
  std::vector<vec<3, T>> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = vec<3, T>{{flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]}};
  return out;
}

/// Random bytes of the same element type and count as `spec`'s array (an adjoint seed).
std::vector<unsigned char> seed_like(const ArgSpec& spec, unsigned seed) {
  size_t scalars = spec.data.size() / size_t(ir::scalar_bytes(spec.element.scalar));
  std::vector<unsigned char> out(spec.data.size());
  if (spec.element.scalar == ir::Scalar::F32) {
    auto v = random_values<float>(scalars, -1, 1, seed);
    std::memcpy(out.data(), v.data(), out.size());
  } else {
    auto v = random_values<double>(scalars, -1, 1, seed);
    std::memcpy(out.data(), v.data(), out.size());
  }
  return out;
}

NdArray upload(const ir::Type& element, const Shape& shape, const std::vector<unsigned char>& bytes,
               const Device& device) {
  NdArray a = NdArray::empty(element, shape, device);
  a.copy_from(NdArray::view(const_cast<unsigned char*>(bytes.data()), element, shape, Device::cpu()));
  return a;
}

/// Every array after the forward launch, then every adjoint array after the adjoint launch.
struct Outcome {
  std::vector<std::string> names;
  std::vector<ir::Scalar> scalars;
  std::vector<std::vector<double>> values;
};

Outcome run_example(const KernelDef& k, int64_t n, const std::vector<ArgSpec>& specs,
                    const Device& device) {
  std::vector<LaunchArg> args, adj;
  std::vector<NdArray> arrays, adj_arrays;
  std::vector<std::string> adj_names;
  for (size_t i = 0; i < specs.size(); ++i) {
    const ArgSpec& s = specs[i];
    if (!s.is_array) {
      args.push_back(s.value);
      adj.emplace_back();
      continue;
    }
    arrays.push_back(upload(s.element, s.shape, s.data, device));
    args.emplace_back(arrays.back());
    if (s.element.is_float()) {
      adj_arrays.push_back(upload(s.element, s.shape, seed_like(s, 1000 + unsigned(i)), device));
      adj.emplace_back(adj_arrays.back());
      adj_names.push_back("adjoint of " + k.params()[i].name);
    } else {
      adj.emplace_back();
    }
  }
  LaunchOptions options;
  options.device = device;
  Outcome out;
  launch(k, n, args, options);
  size_t a = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i].is_array) continue;
    out.names.push_back("forward " + k.params()[i].name);
    out.scalars.push_back(specs[i].element.scalar);
    out.values.push_back(scalars_of(arrays[a++]));
  }
  launch_adjoint(k, n, args, adj, options);
  for (size_t i = 0; i < adj_arrays.size(); ++i) {
    out.names.push_back(adj_names[i]);
    out.scalars.push_back(adj_arrays[i].element().scalar);
    out.values.push_back(scalars_of(adj_arrays[i]));
  }
  return out;
}

void check_example(const KernelDef& k, int64_t n, const std::vector<ArgSpec>& specs) {
  CAPTURE(k.name());
  Outcome cpu = run_example(k, n, specs, Device::cpu());
  Outcome gpu = run_example(k, n, specs, Device::cuda(0));
  REQUIRE(cpu.values.size() == gpu.values.size());
  for (size_t i = 0; i < cpu.values.size(); ++i)
    check_close(gpu.values[i], cpu.values[i], cpu.scalars[i], k.name() + ": " + cpu.names[i]);
}

/// Random spring pairs (never a point with itself) over `np` points.
std::vector<int32_t> spring_pairs(int np, int ns, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> pairs;
  for (int s = 0; s < ns; ++s) {
    int a = int(rng() % unsigned(np)), b = int(rng() % unsigned(np));
    if (a == b) b = (a + 1) % np;
    pairs.push_back(a);
    pairs.push_back(b);
  }
  return pairs;
}

}  // namespace

TEST_CASE("the default device is cuda:0, and cuda_info describes it") {
  CHECK(default_device() == Device::cuda(0));
  CHECK(Device::parse("cuda:0") == Device::cuda(0));
  CudaInfo info = cuda_info();
  REQUIRE(info.available);
  REQUIRE(!info.devices.empty());
  const CudaDeviceInfo& d = info.devices[0];
  MESSAGE("cuda:0 is " << d.name << ", compute capability " << d.compute_major << "."
                       << d.compute_minor << ", " << d.sm_count << " SMs, "
                       << (d.total_memory >> 20) << " MiB; kjit compiles " << d.target);
  CHECK(d.sm_count > 0);
  CHECK(d.total_memory > 0);
  CHECK(d.max_threads_per_block >= 1024);
  int arch = d.compute_major * 10 + d.compute_minor;
  CHECK((d.target == "sm_" + std::to_string(arch) || d.target.rfind("compute_", 0) == 0));
}

TEST_CASE("saxpy and daxpy on cuda:0 equal the cpu") {
  const size_t n = 10007;
  check_example(demo::saxpy.def(), int64_t(n),
                {array_of(random_values<float>(n, -1, 1, 1)), array_of(random_values<float>(n, -1, 1, 2)),
                 value_of(1.5f), array_of(std::vector<float>(n, 0.0f))});
  check_example(demo::daxpy.def(), int64_t(n),
                {array_of(random_values<double>(n, -1, 1, 3)), array_of(random_values<double>(n, -1, 1, 4)),
                 value_of(-0.25), array_of(std::vector<double>(n, 0.0))});
}

TEST_CASE("springs (gathers, atomic scatters) on cuda:0 equal the cpu") {
  const int np = 500, ns = 3000;
  check_example(demo::springs.def(), ns,
                {array_of(random_vec3<float>(np, -2, 2, 5)), array_of(spring_pairs(np, ns, 6)),
                 array_of(random_values<float>(ns, 0.1, 1, 7)), value_of(50.0f),
                 array_of(std::vector<vec3f>(np, vec3f{{0, 0, 0}}))});
  check_example(demo::springs_f64.def(), ns,
                {array_of(random_vec3<double>(np, -2, 2, 8)), array_of(spring_pairs(np, ns, 9)),
                 array_of(random_values<double>(ns, 0.1, 1, 10)), value_of(50.0),
                 array_of(std::vector<vec3d>(np, vec3d{{0, 0, 0}}))});
}

TEST_CASE("damp and iterate (dynamic loops, branches) on cuda:0 equal the cpu") {
  const size_t n = 4099;
  // Lengths up to ~14, damped by 0.95^3: some stay above 10 and take the clamping branch.
  check_example(demo::damp.def(), int64_t(n),
                {array_of(random_vec3<float>(n, -8, 8, 11)), value_of(0.95f), value_of(int32_t(3)),
                 array_of(std::vector<vec3f>(n, vec3f{{0, 0, 0}}))});
  check_example(demo::iterate.def(), 2049,
                {array_of(random_values<double>(2049, -1, 1, 12)),
                 array_of(random_values<double>(2049, 0.3, 0.9, 13)), value_of(int32_t(6)),
                 array_of(std::vector<double>(2049, 0.0))});
}

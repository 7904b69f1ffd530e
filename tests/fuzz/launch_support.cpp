// launch_support.cpp — the fixed kernel signature of generated programs as kjit launches see it.
#include "launch_support.hpp"

#include <cstdio>
#include <cstring>
#include <random>
#include <regex>

namespace fuzz {

const int kLanes[P_COUNT] = {1, 3, 9, 1, 1, 1, 1, 3, 1, 3, 1};
const bool kIsArray[P_COUNT] = {true, true, true, true, false, false, true, true, true, true, true};
const bool kIsOutput[P_COUNT] = {false, false, false, false, false, false, true, true, true, true, true};

kjit::ir::Type elem_type(int p) {
  using kjit::ir::Scalar;
  using kjit::ir::Type;
  if (p == P_IDX || p == P_K) return Type::scalar_of(Scalar::I32);
  if (kLanes[p] == 3) return Type::vector(3, Scalar::F64);
  if (kLanes[p] == 9) return Type::matrix(3, 3, Scalar::F64);
  return Type::scalar_of(Scalar::F64);
}

int count_of(int p, int n) { return (p >= P_ACC) ? kAccSize : n; }

/// Inputs and initial outputs of a program: deterministic from its seed.
std::vector<RefArg> make_inputs(const Program& prog) {
  std::mt19937_64 rng(prog.seed ^ 0xA5A5A5A5DEADBEEFull);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<RefArg> args(P_COUNT);
  for (int p = 0; p < P_COUNT; ++p) {
    RefArg& a = args[size_t(p)];
    a.is_array = kIsArray[p];
    a.count = kIsArray[p] ? count_of(p, prog.n) : 1;
    a.data.resize(size_t(a.count * kLanes[p]));
    for (double& x : a.data) {
      if (p == P_IDX) x = double(rng() % uint64_t(prog.n));
      else if (p == P_K) x = double(rng() % 5);
      else if (p == P_OUT || p == P_OUTV) x = 0;
      else x = u(rng);
    }
  }
  return args;
}

namespace {
template <class T>
std::vector<T> pack(const std::vector<double>& flat) {
  std::vector<T> v(flat.size() * sizeof(double) / sizeof(T));
  std::memcpy(v.data(), flat.data(), flat.size() * sizeof(double));
  return v;
}
}  // namespace

kjit::NdArray to_device(int p, const RefArg& a) {
  if (p == P_IDX) return kjit::from_vector(std::vector<int32_t>(a.data.begin(), a.data.end()), {a.count});
  if (kLanes[p] == 3) return kjit::from_vector(pack<kjit::vec3d>(a.data), {a.count});
  if (kLanes[p] == 9) return kjit::from_vector(pack<kjit::mat33d>(a.data), {a.count});
  return kjit::from_vector(a.data, {a.count});
}

std::vector<double> from_device(int p, const kjit::NdArray& arr, size_t values) {
  std::vector<double> out(values);
  if (kLanes[p] == 3) { auto v = arr.to_vector<kjit::vec3d>(); std::memcpy(out.data(), v.data(), values * 8); }
  else if (kLanes[p] == 9) { auto v = arr.to_vector<kjit::mat33d>(); std::memcpy(out.data(), v.data(), values * 8); }
  else out = arr.to_vector<double>();
  return out;
}

std::vector<kjit::LaunchArg> launch_args(std::vector<kjit::NdArray>& arrays, const std::vector<RefArg>& in) {
  std::vector<kjit::LaunchArg> args;
  for (int p = 0; p < P_COUNT; ++p) {
    if (p == P_S) args.emplace_back(in[size_t(p)].data[0]);
    else if (p == P_K) args.emplace_back(int32_t(in[size_t(p)].data[0]));
    else args.emplace_back(arrays[size_t(p)]);
  }
  return args;
}

void append_values(std::string* out, const std::string& name, const std::vector<double>& data) {
  const size_t bytes = data.size() * sizeof(double);
  *out += name + " float64 " + std::to_string(data.size()) + " " + std::to_string(bytes) + "\n";
  out->append(reinterpret_cast<const char*>(data.data()), bytes);
  *out += "\n";
}

bool names_line(const std::string& msg) {
  static const std::regex re(R"([A-Za-z0-9_./-]+\.(hpp|cpp|h|cc):[0-9]+)");
  return std::regex_search(msg, re);
}

std::string fmt(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

const char* param_name(int p) { return kParamNames[size_t(p)].c_str(); }

/// The program's inputs on the cpu device, one array per array parameter.
std::vector<kjit::NdArray> device_arrays(const std::vector<RefArg>& init) {
  std::vector<kjit::NdArray> arrays(P_COUNT);
  for (int p = 0; p < P_COUNT; ++p)
    if (kIsArray[p]) arrays[size_t(p)] = to_device(p, init[size_t(p)]);
  return arrays;
}

}  // namespace fuzz

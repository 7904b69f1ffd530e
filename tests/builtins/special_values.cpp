// NaN, infinity, signed-zero and denormal rules of every scalar float builtin against Warp
// 1.19's: each builtin that maps 1-3 float32 (or float64) scalars to one is applied to every
// combination of special values, and the bits compared with Warp's
// (tests/builtins/golden/warp_special_values.txt, written by scripts/warp_special_values.sh
// from Warp itself). NaNs compare as NaN whatever their payload; the differences kjit keeps
// on purpose are listed below, and docs/DSL.md says why.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "builtin_kernel.hpp"
#include "kjit/ir/builtins.hpp"
#include "kjit/kjit.hpp"

using namespace kjit;
using ir::Scalar;
using ir::Type;

namespace {

/// The special values each argument takes (ternary builtins: the first eight).
std::vector<double> special_values(Scalar s) {
  const bool f32 = s == Scalar::F32;
  return {std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY, 0.0, -0.0, 1.0, -2.5, 0.5, -1.0, 3.0,
          f32 ? 1e-40 : 1e-310, f32 ? double(std::numeric_limits<float>::max()) : std::numeric_limits<double>::max()};
}

struct Signature {
  std::string name;
  int arity;
  Scalar scalar;
};

/// Every builtin that takes `arity` scalars of `s` and returns one, for arity 1..3.
std::vector<Signature> signatures() {
  std::vector<Signature> out;
  for (Scalar s : {Scalar::F32, Scalar::F64})
    for (int b = 0; b < ir::kBuiltinCount; ++b)
      for (int arity = 1; arity <= 3; ++arity) {
        std::vector<Type> args(size_t(arity), Type::scalar_of(s));
        std::string error;
        auto r = ir::infer_builtin_type(ir::Builtin(b), args.data(), arity, &error);
        if (r && *r == Type::scalar_of(s)) out.push_back({ir::builtin_info(ir::Builtin(b)).name, arity, s});
      }
  return out;
}

/// The argument tuples of a signature: every combination of the special values.
std::vector<std::vector<double>> argument_tuples(const Signature& sig) {
  std::vector<double> v = special_values(sig.scalar);
  if (sig.arity == 3) v.resize(8);
  std::vector<std::vector<double>> out{{}};
  for (int a = 0; a < sig.arity; ++a) {
    std::vector<std::vector<double>> next;
    for (const auto& t : out)
      for (double x : v) {
        next.push_back(t);
        next.back().push_back(x);
      }
    out = next;
  }
  return out;
}

/// kjit's results, as bits (float32 widened to its 32 bits, float64 its 64).
std::vector<uint64_t> kjit_results(const Signature& sig) {
  static int counter = 0;
  auto tuples = argument_tuples(sig);
  const int64_t n = int64_t(tuples.size());
  const Type t = Type::scalar_of(sig.scalar);
  auto kernel = test::make_builtin_kernel("special::" + sig.name + "_" + std::to_string(counter++), "builtins_special",
                                          *ir::find_builtin(sig.name), std::vector<Type>(size_t(sig.arity), t));
  std::vector<LaunchArg> args;
  for (int a = 0; a < sig.arity; ++a) {
    std::vector<double> col;
    for (const auto& tuple : tuples) col.push_back(tuple[size_t(a)]);
    if (sig.scalar == Scalar::F32) args.push_back(from_vector(std::vector<float>(col.begin(), col.end())));
    else args.push_back(from_vector(col));
  }
  NdArray out = NdArray::zeros(t, {n});
  args.push_back(out);
  launch(*kernel, n, args);
  std::vector<uint64_t> bits;
  if (sig.scalar == Scalar::F32) {
    for (float f : out.to_vector<float>()) { uint32_t b; std::memcpy(&b, &f, 4); bits.push_back(b); }
  } else {
    for (double d : out.to_vector<double>()) { uint64_t b; std::memcpy(&b, &d, 8); bits.push_back(b); }
  }
  return bits;
}

bool is_nan_bits(uint64_t b, Scalar s) {
  if (s == Scalar::F32) { float f; uint32_t w = uint32_t(b); std::memcpy(&f, &w, 4); return std::isnan(f); }
  double d; std::memcpy(&d, &b, 8); return std::isnan(d);
}

std::string key(const Signature& s) { return s.name + " " + std::to_string(s.arity) + " " + (s.scalar == Scalar::F32 ? "f32" : "f64"); }

/// Where kjit differs from Warp on purpose (docs/DSL.md, "Special values"): signature ->
/// how many argument tuples differ. Anything else that differs fails.
const std::map<std::string, int> kKeptDifferences = {
    {"neg 1 f32", 1}, {"neg 1 f64", 1},          // -(+0) is -0 (IEEE negation); Warp's 0 - x gives +0
    {"erfinv 1 f32", 2}, {"erfinv 1 f64", 3},    // erfinv(-0) = -0 and erfinv(denormal) != 0 (odd,
                                                 // slope sqrt(pi)/2); Warp gives +0; float64 0.5: 1 ulp
    {"erfcinv 1 f32", 1}, {"erfcinv 1 f64", 1},  // erfcinv(denormal) finite (~9.4, ~26.6); Warp inf
};

const char* kGolden = KJIT_SOURCE_DIR "/tests/builtins/golden/warp_special_values.txt";

}  // namespace

// scripts/warp_special_values.sh asks for the signatures and argument tuples here, then
// writes Warp's results into the golden file.
TEST_CASE("special values: list the signatures" * doctest::skip(std::getenv("KJIT_SPECIAL_VALUES_LIST") == nullptr)) {
  std::ofstream f(std::getenv("KJIT_SPECIAL_VALUES_LIST"));
  for (const Signature& s : signatures()) {
    f << key(s);
    for (double v : special_values(s.scalar)) f << " " << std::hexfloat << v;
    f << "\n";
  }
}

TEST_CASE("every scalar float builtin treats NaN, infinities, signed zeros and denormals as Warp 1.19 does") {
  std::ifstream f(kGolden);
  REQUIRE_MESSAGE(f.good(), "cannot read " << kGolden);
  // Lines: "name arity f32|f64 absent" (Warp has no such signature) or the same with the
  // results' bits in hex, one per argument tuple.
  std::map<std::string, std::vector<uint64_t>> warp;
  std::set<std::string> absent;
  for (std::string line; std::getline(f, line);) {
    std::istringstream in(line);
    std::string name, scalar, first;
    int arity;
    in >> name >> arity >> scalar >> first;
    const std::string k = name + " " + std::to_string(arity) + " " + scalar;
    if (first == "absent") { absent.insert(k); continue; }
    std::vector<uint64_t>& v = warp[k];
    v.push_back(std::stoull(first, nullptr, 16));
    for (std::string h; in >> h;) v.push_back(std::stoull(h, nullptr, 16));
  }
  ModuleOptions o;
  o.enable_adjoint = false;
  kjit::module("builtins_special").set_options(o);
  int compared = 0;
  std::map<std::string, int> differences;
  for (const Signature& sig : signatures()) {
    const std::string k = key(sig);
    if (absent.count(k)) continue;
    INFO(k);
    REQUIRE_MESSAGE(warp.count(k), "no Warp results for " << k << ": rerun scripts/warp_special_values.sh");
    const std::vector<uint64_t> ours = kjit_results(sig);
    const std::vector<uint64_t>& theirs = warp[k];
    REQUIRE(ours.size() == theirs.size());
    auto tuples = argument_tuples(sig);
    for (size_t i = 0; i < ours.size(); ++i) {
      const bool same = ours[i] == theirs[i] || (is_nan_bits(ours[i], sig.scalar) && is_nan_bits(theirs[i], sig.scalar));
      if (same) continue;
      ++differences[k];
      if (!kKeptDifferences.count(k)) {
        std::ostringstream args;
        for (double a : tuples[i]) args << " " << a;
        char bits[64];
        std::snprintf(bits, sizeof bits, "kjit %llx, Warp %llx", (unsigned long long)ours[i], (unsigned long long)theirs[i]);
        FAIL_CHECK(k << " at (" << args.str() << " ): bits " << bits);
      }
    }
    ++compared;
  }
  for (const auto& [k, count] : kKeptDifferences) {
    INFO(k);
    CHECK(differences[k] == count);
  }
  MESSAGE(compared << " signatures compared, " << absent.size() << " that Warp lacks skipped");
  CHECK(compared > 40);
}

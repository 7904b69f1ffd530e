// Tracing: kernels register themselves with names, modules and parameters; they trace once,
// lazily and thread-safely, into the IR their C++ means.
#include <doctest/doctest.h>

#include <thread>
#include <string>

#include "kjit/ir/printer.hpp"
#include "kjit/ir/verifier.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;

namespace tr_tests {
using namespace kjit::dsl;
KJIT_MODULE(dsl_tracing)

KJIT_KERNEL(ops, (Array<Float> x, Array<Int> n, Array<Vec3f> v, Array<Float> out)) {
  Int i = tid();
  Float a = x[i];
  Int k = n[i];
  Vec3f p = v[i];
  Float r = a * 2.0f + 1.0f - a / 3.0f;
  r = r + Float(k % 3) + Float(-k) + Float(k / 2);
  r = r + where(a > 0.5f && !(a > 2.0f), a, -a);
  r = r + min(a, 1.0f) + max(0.0f, a) + clamp(a, -1.0f, 1.0f) + abs(a);
  r = r + sin(a) + cos(a) + tan(a * 0.1f) + exp(a * 0.1f) + log(a + 2.0f) + sqrt(a + 2.0f) + pow(a + 2.0f, 1.5f);
  r = r + floor(a) + ceil(a);
  r = r + dot(p, p) + length(cross(p, Vec3f(1.0f, 0.0f, 0.0f))) + normalize(p).y() + p[2];
  Vec3f q = 2.0f * p + p * a - p / 2.0f;
  r = r + q.x();
  Int bits = (k & 7) | (k ^ 1) | (k << 2) | (k >> 1) | ~k;
  r = r + Float(bits);
  out[i] = r;
}
}  // namespace tr_tests

TEST_CASE("kernels register with qualified names, modules and parameter names") {
  const KernelDef* k = Registry::get().find_kernel("demo::springs");
  REQUIRE(k);
  CHECK(k->module() == "springs");  // the header's stem by default
  REQUIRE(k->params().size() == 5);
  CHECK(k->params()[0].name == "x");
  CHECK(k->params()[0].type.str() == "array1d<vec3f>");
  CHECK(k->params()[1].name == "pairs");
  CHECK(k->params()[3].name == "k");
  CHECK(k->params()[3].type.str() == "float32");
  CHECK(k->params()[4].name == "f");
  CHECK(std::string(k->loc().file).find("springs.hpp") != std::string::npos);
  const KernelDef* ops = Registry::get().find_kernel("tr_tests::ops");
  REQUIRE(ops);
  CHECK(ops->module() == "dsl_tracing");  // KJIT_MODULE in the namespace
  CHECK(Registry::get().find_module("dsl_tracing")->kernels().size() == 1);
}

TEST_CASE("parameter names are read from the parameter list") {
  CHECK(detail::parameter_names("(Array<Vec3f, 2> x, Float a, Array<kjit::mat<3, 3, float>> m)", 3) ==
        std::vector<std::string>{"x", "a", "m"});
  CHECK(detail::kernel_name_from_signature("static const char* demo::inner::k_kjit_tag::where()") ==
        "demo::inner::k");
  CHECK(detail::kernel_name_from_signature("static const char* {anonymous}::k_kjit_tag::where()") ==
        "(anonymous)::k");
  CHECK(detail::default_module_name("examples/springs.hpp") == "springs");
}

TEST_CASE("tracing happens once, lazily, and is thread-safe") {
  const KernelDef& k = tr_tests::ops.def();
  std::vector<const ir::Function*> seen(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { seen[size_t(t)] = &k.ir(); });
  for (auto& t : threads) t.join();
  for (const ir::Function* f : seen) CHECK(f == seen[0]);
  CHECK(ir::check(*seen[0]).empty());
}

TEST_CASE("every operator and builtin of the foundation traces to a verified function") {
  const ir::Function& fn = tr_tests::ops.def().ir();
  std::string text = ir::print(fn);
  for (const char* op : {"mul", "add", "sub", "div", "mod", "neg", "where", "logical_and", "unot", "min", "max",
                         "clamp", "abs", "sin", "cos", "tan", "exp", "log", "sqrt", "pow", "floor", "ceil", "dot",
                         "cross", "length", "normalize", "bit_and", "bit_or", "bit_xor", "lshift", "rshift",
                         "invert", "cast", "construct", "extract", "gt"})
    CHECK_MESSAGE(text.find(std::string(" ") + op + " ") != std::string::npos, op);
}

TEST_CASE("a Var carries state through a loop; dead reads are removed") {
  std::string text = ir::print(demo::damp.def().ir());
  CHECK(text.find("var $0 : vec3f") != std::string::npos);
  CHECK(text.find("for %") != std::string::npos);
  // `out[i] = w` reads out[i] only to store into it; that dead load must be gone.
  CHECK(text.find("array_load %3") == std::string::npos);
}

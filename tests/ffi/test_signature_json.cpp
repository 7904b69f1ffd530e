// The signature JSON the Python shim reads (kjit_ffi_kernel_signature): ordinary parameters,
// a struct parameter's layout (as codegen lays it out), the handlers' error for arrays of structs
// and a value struct nesting a struct, flattened into attributes named by their paths.
#include <doctest/doctest.h>

#include <cstddef>

#include <nlohmann/json.hpp>

#include "frame_builder.hpp"
#include "kernel_info.hpp"
#include "saxpy.hpp"

namespace sig_tests {
using namespace kjit::dsl;

KJIT_STRUCT(Mixed, (Int8, a), (Double, b), (Half, c), (Vec3f, d), (Bool, e), (UInt16, f));
KJIT_STRUCT(Outer, (Int, tag), (Mixed, inner), (Float, w));

KJIT_KERNEL(read_mixed, (Array<Mixed> items, Value<Outer> o, Array<double> out)) {
  Int i = tid();
  Var<Mixed> m = items[i];
  out[i] = m.b() * 2.0;
}

KJIT_KERNEL(read_outers, (Array<Outer> items, Array<double> out)) { out[tid()] = Double(items[tid()].w()); }
KJIT_KERNEL(from_value, (Value<Mixed> m, Array<double> out)) { out[tid()] = m.b(); }
KJIT_KERNEL(from_outer, (Value<Outer> o, Array<double> out)) { out[tid()] = Double(o.w()); }
}  // namespace sig_tests

using namespace kjit;
using kjit::test::FrameBuilder;

namespace {
nlohmann::json signature(const char* name) {
  return nlohmann::json::parse(ffi::detail::kernel_info(name).json);
}
}  // namespace

TEST_CASE("the signature JSON of saxpy: arrays and a typed static value") {
  nlohmann::json j = signature("demo::saxpy");
  CHECK(j["name"] == "demo::saxpy");
  CHECK(j["has_adjoint"] == true);
  REQUIRE(j["params"].size() == 4);
  const auto& x = j["params"][0];
  CHECK(x["kind"] == "array");
  CHECK(x["ndim"] == 1);
  CHECK(x["dtype"] == "float32");
  CHECK(x["supported"] == true);
  CHECK(x["loads"] == true);
  CHECK_FALSE(x.contains("struct"));
  const auto& a = j["params"][2];
  CHECK(a["kind"] == "value");
  CHECK(a["dtype"] == "float32");
  CHECK(j["params"][3]["stores"] == true);
}

TEST_CASE("a struct parameter's layout is in the signature: fields, types, offsets, size, alignment") {
  using sig_tests::Mixed;
  using sig_tests::Outer;
  nlohmann::json j = signature("sig_tests::read_mixed");
  REQUIRE(j["params"].size() == 10);  // items, o's eight leaves (o.tag, o.inner.a .. f, o.w), out
  const auto& items = j["params"][0];
  CHECK(items["name"] == "items");
  CHECK(items["kind"] == "array");
  CHECK(items["ndim"] == 1);
  CHECK(items["dtype"].is_null());
  CHECK(items["supported"] == false);
  const auto& s = items["struct"];
  CHECK(s["name"] == "sig_tests::Mixed");
  CHECK(s["size"] == 40);
  CHECK(s["size"] == sizeof(Mixed));
  CHECK(s["align"] == 8);
  CHECK(s["align"] == alignof(Mixed));
  struct Field {
    const char* name;
    const char* type;
    size_t offset, host_offset;
  };
  const Field want[] = {{"a", "int8", 0, offsetof(Mixed, a)},    {"b", "float64", 8, offsetof(Mixed, b)},
                        {"c", "float16", 16, offsetof(Mixed, c)}, {"d", "vec3f", 20, offsetof(Mixed, d)},
                        {"e", "bool", 32, offsetof(Mixed, e)},    {"f", "uint16", 34, offsetof(Mixed, f)}};
  REQUIRE(s["fields"].size() == 6);
  for (size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(s["fields"][i]["name"] == want[i].name);
    CHECK(s["fields"][i]["type"] == want[i].type);
    CHECK(s["fields"][i]["offset"] == want[i].offset);
    CHECK(s["fields"][i]["offset"] == want[i].host_offset);
  }
  CHECK(s["fields"][3]["lanes"] == 3);

  // An array of structs nesting a struct: the nested layout sits under its field.
  const nlohmann::json outers = signature("sig_tests::read_outers");
  const auto& o = outers["params"][0];
  CHECK(o["kind"] == "array");
  CHECK(o["supported"] == false);
  CHECK(o["struct"]["name"] == "sig_tests::Outer");
  CHECK(o["struct"]["size"] == sizeof(Outer));
  REQUIRE(o["struct"]["fields"].size() == 3);
  CHECK(o["struct"]["fields"][1]["name"] == "inner");
  CHECK(o["struct"]["fields"][1]["offset"] == offsetof(Outer, inner));
  CHECK(o["struct"]["fields"][1]["struct"]["name"] == "sig_tests::Mixed");
  CHECK(o["struct"]["fields"][2]["offset"] == offsetof(Outer, w));
  CHECK(j["params"][9]["dtype"] == "float64");
}

TEST_CASE("the handlers reject arrays of structs, naming them and their struct, and flatten nested value structs") {
  std::vector<unsigned char> items(40 * 4);
  std::vector<double> out(4);
  FrameBuilder b;
  b.arg(xla::kU8, {4, 40}, items.data()).ret(xla::kF64, {4}, out.data());
  b.attr_string("kjit_kernel", "sig_tests::read_mixed");
  auto o = kjit::test::call(&kjit_xla_launch_cpu, b.frame());
  CHECK(o.code == xla::kInvalidArgument);
  CHECK(o.message == "kjit kernel 'sig_tests::read_mixed': array argument 'items' (array1d<sig_tests::Mixed>) holds struct "
                     "sig_tests::Mixed, which the XLA FFI cannot pass: structs are not supported from JAX");

  // A value struct holding a struct is flattened into its leaves, each an attribute named by
  // its path (test_nested_structs.cpp: arrays at depth).
  FrameBuilder v;
  v.ret(xla::kF64, {4}, out.data());
  v.attr_string("kjit_kernel", "sig_tests::from_outer").attr_array<int64_t>("kjit_launch_dims", xla::kS64, {4});
  v.attr_scalar("o.tag", xla::kS32, int32_t(3)).attr_scalar("o.inner.a", xla::kS8, int8_t(-2));
  v.attr_scalar("o.inner.b", xla::kF64, 0.5).attr_scalar("o.inner.c", xla::kU16, uint16_t(0x3c00));
  v.attr_array<float>("o.inner.d", xla::kF32, {1, 2, 3}).attr_scalar("o.inner.e", xla::kPred, uint8_t(1));
  v.attr_scalar("o.inner.f", xla::kU16, uint16_t(9)).attr_scalar("o.w", xla::kF32, 2.5f);
  o = kjit::test::call(&kjit_xla_launch_cpu, v.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  CHECK(out == std::vector<double>(4, 2.5));
  // A value struct of plain values is: one attribute per field, named "m.<field>".
  nlohmann::json m = signature("sig_tests::from_value");
  REQUIRE(m["params"].size() == 7);
  CHECK(m["params"][1]["name"] == "m.b");
  CHECK(m["params"][1]["dtype"] == "float64");
  CHECK(m["params"][1]["field_of"]["struct"] == "sig_tests::Mixed");
}

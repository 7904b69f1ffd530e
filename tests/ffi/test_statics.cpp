// Static values through the handlers in the encodings XLA's FFI accepts: 16-bit floats as
// their uint16 bits, uint64 above INT64_MAX as a 1-element array; other dtypes are refused.
#include <doctest/doctest.h>

#include "frame_builder.hpp"
#include "robust_kernels.hpp"

using namespace kjit;
using kjit::test::FrameBuilder;
using kjit::test::call;

TEST_CASE("half and bfloat16 statics travel as uint16 bits; uint64 as a 1-element array") {
  bool ob = false;
  int8_t oi8 = 0;
  uint8_t ou8 = 0;
  int16_t oi16 = 0;
  uint16_t ou16 = 0, of16 = 0, obf16 = 0;
  int32_t oi32 = 0;
  uint32_t ou32 = 0;
  int64_t oi64 = 0;
  uint64_t ou64 = 0;
  float of32 = 0;
  double of64 = 0;
  FrameBuilder b;
  b.ret(xla::kPred, {1}, &ob).ret(xla::kS8, {1}, &oi8).ret(xla::kU8, {1}, &ou8).ret(xla::kS16, {1}, &oi16);
  b.ret(xla::kU16, {1}, &ou16).ret(xla::kS32, {1}, &oi32).ret(xla::kU32, {1}, &ou32).ret(xla::kS64, {1}, &oi64);
  b.ret(xla::kU64, {1}, &ou64).ret(xla::kF16, {1}, &of16).ret(xla::kBF16, {1}, &obf16);
  b.ret(xla::kF32, {1}, &of32).ret(xla::kF64, {1}, &of64);
  b.attr_string("kjit_kernel", "tests::robust::echo_scalars").attr_array<int64_t>("kjit_launch_dims", xla::kS64, {1});
  b.attr_scalar("b", xla::kPred, uint8_t(1)).attr_scalar("i8", xla::kS8, int8_t(-128));
  b.attr_scalar("u8", xla::kU8, uint8_t(255)).attr_scalar("i16", xla::kS16, int16_t(-32768));
  b.attr_scalar("u16", xla::kU16, uint16_t(65535)).attr_scalar("i32", xla::kS32, INT32_MIN);
  b.attr_scalar("u32", xla::kU32, UINT32_MAX).attr_scalar("i64", xla::kS64, INT64_MIN);
  b.attr_array<uint64_t>("u64", xla::kU64, {UINT64_MAX});
  b.attr_scalar("f16", xla::kU16, uint16_t(0x7bff));   // 65504, the largest half
  b.attr_scalar("bf16", xla::kU16, uint16_t(0xff80));  // -inf
  b.attr_scalar("f32", xla::kF32, -1.5f).attr_scalar("f64", xla::kF64, 1e300);
  auto o = call(&kjit_xla_launch_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  CHECK(ob);
  CHECK(oi8 == -128);
  CHECK(ou8 == 255);
  CHECK(oi16 == -32768);
  CHECK(ou16 == 65535);
  CHECK(oi32 == INT32_MIN);
  CHECK(ou32 == UINT32_MAX);
  CHECK(oi64 == INT64_MIN);
  CHECK(ou64 == UINT64_MAX);
  CHECK(of16 == 0x7bff);
  CHECK(obf16 == 0xff80);
  CHECK(of32 == -1.5f);
  CHECK(of64 == 1e300);
}

TEST_CASE("a static of another dtype is still refused, naming the argument") {
  uint16_t h[3] = {}, bf[3] = {};
  uint64_t ul[3] = {};
  FrameBuilder b;
  b.ret(xla::kF16, {1, 3}, h).ret(xla::kBF16, {1, 3}, bf).ret(xla::kU64, {1, 3}, ul);
  b.attr_string("kjit_kernel", "tests::robust::echo_vectors").attr_array<int64_t>("kjit_launch_dims", xla::kS64, {1});
  b.attr_array<int16_t>("h", xla::kS16, {1, 2, 3});
  b.attr_array<uint16_t>("bf", xla::kU16, {0x3f80, 0, 0});
  b.attr_array<uint64_t>("ul", xla::kU64, {1, UINT64_MAX, 3});
  auto o = call(&kjit_xla_launch_cpu, b.frame());
  CHECK(o.code == xla::kInvalidArgument);
  CHECK_MESSAGE(o.message.find("Invalid data type for static argument 'h', expected float16, got int16") !=
                    std::string::npos,
                o.message);
}

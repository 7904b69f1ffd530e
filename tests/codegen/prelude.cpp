// The prelude carries only what a module uses.
#include <doctest/doctest.h>
#include <string>

#include "kjit/codegen/codegen.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "loops.hpp"
#include "prelude.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;

namespace {
std::string text_of(const KernelDef& k, bool adjoint) {
  codegen::CodegenOptions o;
  o.enable_adjoint = adjoint;
  return codegen::generate_module("m", {&k.ir()}, o).text;
}
}  // namespace

TEST_CASE("a scalar kernel carries no vector, matrix, math or atomic code") {
  std::string t = text_of(demo::saxpy.def(), false);
  CHECK(t.find("struct vec_t {") == std::string::npos);
  CHECK(t.find("struct mat_t {") == std::string::npos);
  CHECK(t.find("KJ_FUNC float sin(") == std::string::npos);
  CHECK(t.find("atomic_add(") == std::string::npos);
  CHECK(t.find("struct array_t {") != std::string::npos);  // the ABI, always
}

TEST_CASE("chunks come with what they require, in dependency order") {
  std::string t = text_of(demo::damp.def(), true);
  size_t vec = t.find("struct vec_t {"), length = t.find("T length(const vec_t<N, T>& v)"),
         sqrt = t.find("KJ_MATH1(sqrt,");
  REQUIRE(vec != std::string::npos);
  REQUIRE(length != std::string::npos);
  REQUIRE(sqrt != std::string::npos);
  CHECK(vec < length);
  CHECK(sqrt < length);
  CHECK(t.find("KJ_FUNC void report_status(") != std::string::npos);  // the adjoint loop reports overflow
  CHECK(text_of(demo::damp.def(), false).find("KJ_FUNC void report_status(") == std::string::npos);
}

TEST_CASE("the prelude's chunks are known and hashed") {
  CHECK(codegen::prelude_has_chunk("core"));
  CHECK(codegen::prelude_has_chunk("atomic"));
  CHECK(!codegen::prelude_has_chunk("no-such-chunk"));
  CHECK(codegen::prelude_hash().size() == 64);
}

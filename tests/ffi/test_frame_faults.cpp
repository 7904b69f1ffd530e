// Faults in the call frame itself: no api, counts beyond int, a cyclic extension list, a
// metadata extension without metadata on EXECUTE. Each is reported (or, with no api to report
// through, dropped) and never crashes, hangs or claims a launch that did not run.
#include <doctest/doctest.h>

#include "frame_builder.hpp"

using namespace kjit;
using kjit::test::FrameBuilder;
using kjit::test::call;

namespace {

struct Saxpy {
  std::vector<float> x = std::vector<float>(16, 1.f), y = std::vector<float>(16, 2.f), out = std::vector<float>(16, -1.f);
  FrameBuilder b;
  Saxpy() {
    b.arg(xla::kF32, {16}, x.data()).arg(xla::kF32, {16}, y.data()).ret(xla::kF32, {16}, out.data());
    b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 3.f);
  }
};

xla::Handler* const kHandlers[] = {&kjit_xla_launch_cpu, &kjit_xla_adjoint_cpu, &kjit_xla_launch_cuda,
                                   &kjit_xla_adjoint_cuda};

}  // namespace

TEST_CASE("a frame without an api returns without running (nothing to report through), on every handler") {
  for (xla::Handler* h : kHandlers) {
    Saxpy s;
    xla::CallFrame* f = s.b.frame();
    f->api = nullptr;
    CHECK(h(f) == nullptr);
    CHECK(s.out[0] == -1.f);
  }
}

TEST_CASE("argument and result counts beyond 2^31 are refused, not truncated to int") {
  for (int64_t big : {(int64_t(1) << 32) + 2, (int64_t(1) << 31) + 1, int64_t(1) << 40}) {
    Saxpy s;
    xla::CallFrame* f = s.b.frame();
    f->args.size = big;  // int(big) is 2 or negative: it passed the count checks
    auto o = call(&kjit_xla_launch_cpu, f);
    CHECK_FALSE(o.ok);
    CHECK(o.code == xla::kInvalidArgument);
    CHECK_MESSAGE(o.message.find("argument table has " + std::to_string(big) + " entries") != std::string::npos,
                  o.message);
    Saxpy r;
    xla::CallFrame* g = r.b.frame();
    g->rets.size = big;
    o = call(&kjit_xla_launch_cpu, g);
    CHECK(o.code == xla::kInvalidArgument);
    CHECK_MESSAGE(o.message.find("result table has " + std::to_string(big) + " entries") != std::string::npos,
                  o.message);
    CHECK(r.out[0] == -1.f);
  }
}

TEST_CASE("a cyclic extension list is an error, not a hang") {
  Saxpy s;
  xla::ExtensionBase a{sizeof(xla::ExtensionBase), xla::ExtensionType(7), nullptr};
  xla::ExtensionBase b{sizeof(xla::ExtensionBase), xla::ExtensionType(8), &a};
  a.next = &b;
  xla::CallFrame* f = s.b.frame();
  f->extension_start = &a;
  for (xla::Handler* h : kHandlers) {
    auto o = call(h, f);
    CHECK_FALSE(o.ok);
    CHECK(o.code == xla::kInvalidArgument);
    CHECK_MESSAGE(o.message.find("extension list is cyclic or longer than 64 entries") != std::string::npos,
                  o.message);
  }
  CHECK(s.out[0] == -1.f);
}

TEST_CASE("a metadata extension without metadata on EXECUTE is an error, not a silent success") {
  Saxpy s;
  xla::MetadataExtension ext{};
  ext.extension_base = {sizeof ext, xla::kExtensionMetadata, nullptr};
  ext.metadata = nullptr;
  xla::CallFrame* f = s.b.frame();
  f->extension_start = &ext.extension_base;
  auto o = call(&kjit_xla_launch_cpu, f);
  CHECK_FALSE(o.ok);
  CHECK(o.code == xla::kInvalidArgument);
  CHECK_MESSAGE(o.message.find("metadata extension has no metadata") != std::string::npos, o.message);
  // A real probe still works, behind another extension too.
  xla::Metadata md{};
  md.struct_size = sizeof md;
  ext.metadata = &md;
  xla::ExtensionBase other{sizeof(xla::ExtensionBase), xla::ExtensionType(9), &ext.extension_base};
  f->extension_start = &other;
  CHECK(call(&kjit_xla_launch_cuda, f).ok);
  CHECK(md.traits == 1u);
  CHECK(s.out[0] == -1.f);
}

// The host-compiler driver: a generated module builds into a shared object whose entry
// points dlsym finds and that computes right with hand-packed arguments; KJIT_CXX overrides
// the compiler and its identity.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>

#include "elf_reader.hpp"
#include "host_compiler.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"
#include "kjit/compiler/key.hpp"
#include "module_fixtures.hpp"
#include "test_support.hpp"

using namespace kjit::compiler;

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("a generated module builds for cpu and computes right through dlopen") {
  kjit::test::TempDir dir("host");
  CacheConfig cfg;
  cfg.dir = dir.path();
  Cache cache(cfg);
  ModuleSource m = kjit::test::saxpy_module();
  Artifact a = build_module(m, Target::host(), CompileOptions{}, cache);
  REQUIRE(!a.library_path.empty());
  CHECK(a.image.empty());
  CHECK(a.library_path.rfind(cache.root(), 0) == 0);

  // Only the entry points are exported: -fvisibility=hidden keeps the rest private.
  std::string so = kjit::test::read_file(a.library_path);
  std::string err;
  auto exported = elf_defined_functions(so, /*dynamic=*/true, &err);
  REQUIRE_MESSAGE(exported, err);
  for (const std::string& e : m.entry_points) CHECK(exported->count(e) == 1);
  for (const std::string& name : *exported) CHECK(name.find("_body") == std::string::npos);

  using Entry = void (*)(void**, int64_t, int64_t);
  const int n = 37;
  std::vector<float> x(n), y(n), out(n, 0.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * float(i);
    y[i] = 3.0f - float(i);
  }
  const float alpha = 2.5f;
  kj::value_t<float> alpha_arg{nullptr, alpha};  // a value parameter: kjit/abi.h's value_t
  kj::launch_bounds_t dim = kjit::test::bounds(n);
  auto ax = kjit::test::view(x), ay = kjit::test::view(y), aout = kjit::test::view(out);
  void* fwd_args[] = {&dim, &ax, &ay, &alpha_arg, &aout};
  auto fwd = reinterpret_cast<Entry>(kjit::test::cpu_entry(a, m.entry_points[0]));
  fwd(fwd_args, 0, 20);  // two ranges, as the runtime's thread pool splits a launch
  fwd(fwd_args, 20, n);
  for (int i = 0; i < n; ++i) CHECK(out[i] == doctest::Approx(alpha * x[i] + y[i]));

  // The adjoint: d(out)/dx = alpha, d(out)/dy = 1.
  std::vector<float> gx(n, 0.0f), gy(n, 0.0f), gout(n);
  for (int i = 0; i < n; ++i) gout[i] = 1.0f + float(i);
  auto agx = kjit::test::view(gx), agy = kjit::test::view(gy), agout = kjit::test::view(gout);
  // alpha's adjoint slot: the partial sums of its blocks (one block for 37 threads).
  float partial = -1.0f, *galpha = &partial;
  void* adj_args[] = {&dim, &ax, &ay, &alpha_arg, &aout, &agx, &agy, &galpha, &agout};
  auto adj = reinterpret_cast<Entry>(kjit::test::cpu_entry(a, m.entry_points[1]));
  adj(adj_args, 0, n);
  double dalpha = 0;
  for (int i = 0; i < n; ++i) {
    CHECK(gx[i] == doctest::Approx(alpha * gout[i]));
    CHECK(gy[i] == doctest::Approx(gout[i]));
    dalpha += double(x[i]) * double(gout[i]);
  }
  CHECK(partial == doctest::Approx(dalpha).epsilon(1e-6));  // written, not added to
}

TEST_CASE("compile options become host compiler flags") {
  CompileOptions o;
  auto base = host_options(o);
  CHECK(has(base, "-shared"));
  CHECK(has(base, "-fPIC"));
  CHECK(has(base, "-fvisibility=hidden"));
  CHECK(has(base, "-O3"));
  CHECK_FALSE(has(base, "-g"));
  // Results must not depend on the cpu: no contraction into FMAs the text does not ask for.
  CHECK(has(base, "-ffp-contract=off"));
#if defined(__x86_64__)
  // The cpu's x86-64 level (a portable ISA name, never "native" by default).
  bool level = false;
  for (const char* l : {"-march=x86-64", "-march=x86-64-v2", "-march=x86-64-v3", "-march=x86-64-v4"})
    level = level || has(base, l);
  CHECK(level);
#endif
  o.fast_math = true;
  o.line_info = true;
  o.opt_level = 2;
  auto opts = host_options(o);
  CHECK(has(opts, "-ffast-math"));
  CHECK(has(opts, "-g"));
  CHECK(has(opts, "-O2"));
  CompileOptions d;
  d.debug = true;
  CHECK(has(host_options(d), "-O0"));
  CHECK(has(host_options(d), "-g"));
  // No C++ runtime or start files to link (most of ld's time); the libraries modules may
  // need come after the source, and every flag is in the key.
  CHECK(has(base, "-nostdlib"));
  const std::string id = host_compiler_identity();
  CHECK(id.find(" -nostdlib") != std::string::npos);
  CHECK(id.find(" -lm -lgcc") != std::string::npos);
#if defined(__GNUC__) && !defined(__clang__)
  // GCC (kjit's default compiler here): no unswitched or epilogue copies of vector loops.
  CHECK(has(base, "-fno-unswitch-loops"));
  CHECK(has(base, "--param=vect-epilogues-nomask=0"));
  CHECK(id.find("-fno-unswitch-loops --param=vect-epilogues-nomask=0") != std::string::npos);
#endif
}

TEST_CASE("a cpu module links no C++ runtime, and the math library when it calls it") {
  kjit::test::TempDir dir("host_libs");
  CacheConfig cfg;
  cfg.dir = dir.path();
  Cache cache(cfg);
  // A tiny module whose entry writes sinf(i) (the C library's, declared as the prelude does).
  ModuleSource m = kjit::test::tiny_module("sin_fill", 0.0f);
  const std::string fill = "out[i] = 0.000000f;";
  REQUIRE(m.text.find(fill) != std::string::npos);
  m.text.replace(m.text.find(fill, m.text.find("#else")), fill.size(), "out[i] = sinf((float)i);");
  m.text.replace(m.text.find("#else\n") + 6, 0, "extern \"C\" float sinf(float);\n");
  Artifact a = build_module(m, Target::host(), CompileOptions{}, cache);
  std::string error;
  auto needed = elf_needed_libraries(kjit::test::read_file(a.library_path), &error);
  REQUIRE_MESSAGE(needed, error);
  CHECK(*needed == std::vector<std::string>{"libm.so.6"});
  std::vector<float> out = kjit::test::run_tiny(a, "sin_fill");
  for (size_t i = 0; i < out.size(); ++i) CHECK(out[i] == ::sinf(float(i)));

  // saxpy calls nothing outside itself: no library at all.
  Artifact s = build_module(kjit::test::saxpy_module("saxpy_libs"), Target::host(), CompileOptions{}, cache);
  needed = elf_needed_libraries(kjit::test::read_file(s.library_path), &error);
  REQUIRE_MESSAGE(needed, error);
  CHECK(needed->empty());
}

TEST_CASE("KJIT_CPU_ISA picks the -march of cpu modules, enters the key, and is checked") {
  const std::string before = host_compiler_identity();
  {
    kjit::test::ScopedEnv isa("KJIT_CPU_ISA", "x86-64-v2");
    CHECK(has(host_options(CompileOptions{}), "-march=x86-64-v2"));
    CHECK(host_compiler_identity().find("-march=x86-64-v2") != std::string::npos);
    CHECK(host_compiler_identity() != before);
  }
  {
    kjit::test::ScopedEnv isa("KJIT_CPU_ISA", "none");
    for (const std::string& f : host_options(CompileOptions{})) CHECK(f.rfind("-march=", 0) == std::string::npos);
  }
  {
    kjit::test::ScopedEnv isa("KJIT_CPU_ISA", "x86-64; rm -rf /");
    CHECK_THROWS_WITH_AS(host_options(CompileOptions{}),
                         "KJIT_CPU_ISA='x86-64; rm -rf /' is not a -march value (letters, digits, '-', '_', "
                         "'.'); use e.g. x86-64-v3, native, or none",
                         kjit::Error);
  }
  CHECK(host_compiler_identity() == before);
}

TEST_CASE("KJIT_CXX overrides the host compiler, and its --version enters the key") {
  kjit::test::TempDir dir("cxx");
  // A wrapper that forwards to the real compiler but reports another version.
  const std::string wrapper = dir / "fake-cxx";
  kjit::test::write_file(wrapper, "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'fake-cxx 99.1'; exit 0; fi\n"
                                  "exec " KJIT_TEST_HOST_CXX " \"$@\"\n");
  ::chmod(wrapper.c_str(), 0700);
  ModuleSource m = kjit::test::tiny_module("cxx_override", 4.0f);
  std::string default_id = compiler_identity(Target::host());
  std::string default_key = module_key(m, Target::host(), CompileOptions{});
  {
    kjit::test::ScopedEnv env("KJIT_CXX", wrapper.c_str());
    CHECK(host_compiler_path() == wrapper);
    std::string id = compiler_identity(Target::host());
    CHECK(id.find("fake-cxx 99.1") != std::string::npos);
    CHECK(id != default_id);
    CHECK(module_key(m, Target::host(), CompileOptions{}) != default_key);
    CacheConfig cfg;
    cfg.dir = dir / "cache";
    Cache cache(cfg);
    Artifact a = build_module(m, Target::host(), CompileOptions{}, cache);
    CHECK(kjit::test::tiny_computes(a, "cxx_override", 4.0f));
    CHECK(a.meta["compiler"].get<std::string>().find("fake-cxx 99.1") != std::string::npos);
  }
  CHECK(module_key(m, Target::host(), CompileOptions{}) == default_key);
  {
    kjit::test::ScopedEnv env("KJIT_CXX", "kjit-no-such-compiler-anywhere");
    try {
      compiler_identity(Target::host());
      FAIL("expected an error");
    } catch (const kjit::Error& e) {
      CHECK(e.kind() == kjit::ErrorKind::User);
      CHECK(std::string(e.what()).find("KJIT_CXX") != std::string::npos);
    }
  }
}

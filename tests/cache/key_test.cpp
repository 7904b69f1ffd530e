// Module keys: SHA-256 of a documented material, equal across processes and build folders,
// different whenever anything that changes the artifact changes.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "cache_fixtures.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/compiler/key.hpp"
#include "sha256.hpp"

using namespace kjit::compiler;

namespace {

std::string key(const ModuleSource& m, const Target& t = Target::cubin(90), const CompileOptions& o = {}) {
  return module_key(m, t, o);
}

}  // namespace

TEST_CASE("SHA-256 matches the standard test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex(std::string(1000, 'a')) ==
        "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
  // FIPS 180-2's examples: the 448-bit message (two blocks once padded) and one million 'a'.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 comes from OpenSSL's libcrypto unless KJIT_CRYPTO_PATH=none turns it off") {
  const char* env = std::getenv("KJIT_CRYPTO_PATH");
  CHECK(sha256_uses_openssl() == !(env && std::string(env) == "none"));
}

TEST_CASE("OpenSSL's SHA-256 agrees with LLVM's on every length around the block boundaries") {
  std::string data;
  uint32_t x = 12345;
  for (size_t n = 0; n < 600; ++n) {
    CAPTURE(n);
    CHECK(sha256_hex(data) == sha256_hex_llvm(data));
    x = x * 1103515245u + 12345u;
    data += char(x >> 16);
  }
  std::string big(1 << 20, 'q');
  CHECK(sha256_hex(big) == sha256_hex_llvm(big));
}

TEST_CASE("a key is the SHA-256 of its material, which names every ingredient") {
  ModuleSource m = kjit::test::saxpy_module();
  for (Target t : {Target::cubin(90), Target::ptx(90), Target::host()}) {
    std::string material = module_key_material(m, t, CompileOptions{});
    std::string k = key(m, t);
    CHECK(k.size() == 64);
    CHECK(k.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(k == sha256_hex(material));
    CHECK(k == key(m, t));  // deterministic
    CHECK(material.find("cache-format " + std::to_string(kCacheFormatVersion) + "\n") != std::string::npos);
    CHECK(material.find("abi " + std::to_string(kj::kAbiVersion) + "\n") != std::string::npos);
    CHECK(material.find("target " + t.name() + "\n") != std::string::npos);
    CHECK(material.find("compiler " + compiler_identity(t) + "\n") != std::string::npos);
    CHECK(material.find("options " + CompileOptions{}.fingerprint() + "\n") != std::string::npos);
    CHECK(material.find(m.identity) != std::string::npos);
  }
  CHECK(compiler_identity(Target::cubin(90)).find("nvrtc ") == 0);
  CHECK(compiler_identity(Target::host()).find("host ") == 0);
}

TEST_CASE("the same module has the same key in another process") {
  std::string out;
  for (const char* t : {"sm_90", "compute_90", "cpu"}) {
    CAPTURE(t);
    REQUIRE(kjit::test::run_command(kjit::test::worker_path() + " key " + t, &out) == 0);
    std::istringstream in(out);
    std::string tiny, saxpy;
    in >> tiny >> saxpy;
    CHECK(tiny == key(kjit::test::tiny_module("keyed", 2.0f), Target::parse(t)));
    CHECK(saxpy == key(kjit::test::saxpy_module(), Target::parse(t)));
  }
}

TEST_CASE("no path of the build folder, the working folder or the cache enters a key") {
  // Keys hash the module's identity (codegen version, prelude hash, options, IR with the
  // user's source locations), the target, the options and the compiler's identity: none of
  // them names where kjit or the program was built, so a cache precompiled from the same
  // sources in another build folder (or on another machine) hits.
  ModuleSource m = kjit::test::saxpy_module();
  const std::string build_dir = KJIT_BINARY_DIR;
  for (Target t : {Target::cubin(90), Target::ptx(90), Target::host()}) {
    std::string material = module_key_material(m, t, CompileOptions{});
    CHECK(material.find(build_dir) == std::string::npos);
    CHECK(compiler_identity(t).find('/') == std::string::npos);  // no compiler path either
  }
  std::string before = key(m, Target::host());
  char cwd[PATH_MAX];
  REQUIRE(::getcwd(cwd, sizeof cwd));
  kjit::test::TempDir elsewhere("cwd");
  REQUIRE(::chdir(elsewhere.path().c_str()) == 0);
  kjit::test::ScopedEnv cache_dir("KJIT_CACHE_DIR", elsewhere.path().c_str());
  CHECK(key(kjit::test::saxpy_module(), Target::host()) == before);
  REQUIRE(::chdir(cwd) == 0);
}

TEST_CASE("anything that changes the artifact changes the key") {
  ModuleSource m = kjit::test::saxpy_module();
  std::set<std::string> keys;
  auto add = [&](const std::string& k) {
    CHECK_MESSAGE(keys.insert(k).second, "duplicate key");
  };
  add(key(m));
  ModuleSource other_kernel = kjit::test::generated_module("saxpy", {"kjit_fixture::scale"});
  add(key(other_kernel));  // another kernel body
  ModuleSource no_adjoint = kjit::test::generated_module("saxpy", {"kjit_fixture::saxpy"}, false);
  add(key(no_adjoint));  // codegen options
  ModuleSource renamed = m;
  renamed.name = "saxpy2";
  add(key(renamed));
  ModuleSource id = m;
  id.identity += " ";
  add(key(id));
  for (Target t : {Target::cubin(80), Target::ptx(90), Target::ptx(80), Target::host()}) add(key(m, t));
  CompileOptions o;
  o.fast_math = true;
  add(key(m, Target::cubin(90), o));
  o = {};
  o.line_info = true;
  add(key(m, Target::cubin(90), o));
  o = {};
  o.debug = true;
  add(key(m, Target::cubin(90), o));
  o = {};
  o.max_registers = 64;
  add(key(m, Target::cubin(90), o));
  o = {};
  o.opt_level = 2;
  add(key(m, Target::cubin(90), o));
  o = {};
  o.fast_compile = true;
  add(key(m, Target::cubin(90), o));
  o = {};
  o.cxx_standard = "c++20";
  add(key(m, Target::cubin(90), o));
  o = {};
  o.extra = {"-DA", "-DB"};
  add(key(m, Target::cubin(90), o));
  o.extra = {"-DA -DB"};
  add(key(m, Target::cubin(90), o));
  // A hand-written module without identity: its text is the identity.
  ModuleSource t1 = kjit::test::tiny_module("t", 1.0f), t2 = kjit::test::tiny_module("t", 2.0f);
  CHECK(key(t1) != key(t2));
}

TEST_CASE("a key and a hit need no code generation") {
  kjit::test::TempDir dir("nogen");
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(dir.path(), log));
  ModuleSource m = kjit::test::saxpy_module("lazy_saxpy");
  std::string text = m.text;
  m.text.clear();
  int generated = 0;
  m.generate = [&] {
    ++generated;
    return text;
  };
  std::string k = key(m, Target::ptx(90));
  CHECK(generated == 0);
  build_module(m, Target::ptx(90), CompileOptions{}, cache);
  CHECK(generated == 1);
  ModuleSource again = m;
  again.text.clear();
  again.generate = [] () -> std::string { throw std::runtime_error("generated on a hit"); };
  Artifact a = build_module(again, Target::ptx(90), CompileOptions{}, cache);
  CHECK(a.origin == ArtifactOrigin::Cached);
  CHECK(a.key == k);
}

TEST_CASE("every key carries the hash of codegen's sources and builtin tables, computed at build time") {
  // Recomputed from the checkout as cmake/KjitSourceHash.cmake computes it: SHA-256 over each
  // file's path (relative to the project) and SHA-256, in sorted order.
  namespace fs = std::filesystem;
  const fs::path root = KJIT_SOURCE_DIR;
  std::vector<std::string> files;
  auto add = [&](const fs::path& dir, std::initializer_list<const char*> exts) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir))
      for (const char* x : exts)
        if (e.is_regular_file() && e.path().extension() == x) files.push_back(fs::relative(e.path(), root).string());
  };
  add("codegen/src", {".cpp", ".hpp"});
  add("codegen/include", {".hpp"});
  add("kernels_dsl/ir/include/kjit/ir", {".def"});
  std::sort(files.begin(), files.end());
  CHECK(std::count(files.begin(), files.end(), "kernels_dsl/ir/include/kjit/ir/builtins.def") == 1);
  CHECK(std::count(files.begin(), files.end(), "codegen/src/forward_emitter.cpp") == 1);
  std::string all;
  for (const std::string& f : files) all += f + "\n" + sha256_hex(kjit::test::read_file((root / f).string())) + "\n";
  const std::string hash(kjit::codegen::codegen_sources_hash());
  CHECK(hash == sha256_hex(all));

  // It enters the identity of every generated module, hence its key: an emitter change
  // without a version bump cannot serve a stale binary.
  ModuleSource m = kjit::test::saxpy_module();
  CHECK(m.identity.find("\ncodegen-sources " + hash + "\n") != std::string::npos);
  CHECK(module_key_material(m, Target::host(), CompileOptions{}).find("codegen-sources " + hash) != std::string::npos);
  ModuleSource other = m;
  other.identity.replace(other.identity.find(hash), hash.size(), std::string(64, '0'));
  CHECK(key(other) != key(m));
}

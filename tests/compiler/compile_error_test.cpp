// Compile errors: the message names the user's file:line (through the generated #line
// directives), quotes the offending generated line, and says where the source was saved;
// an error in kjit's own generated code (a broken prelude) is reported as such.
#include <doctest/doctest.h>

#include <sstream>

#include "compile_log.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"
#include "module_fixtures.hpp"
#include "test_support.hpp"

using namespace kjit::compiler;

namespace {

/// The Compile error `build_module` throws (fails the test when it does not throw one).
std::string compile_error(const ModuleSource& m, const Target& t, Cache& cache) {
  try {
    build_module(m, t, CompileOptions{}, cache);
  } catch (const kjit::Error& e) {
    CHECK(e.kind() == kjit::ErrorKind::Compile);
    return e.what();
  }
  FAIL("module '" << m.name << "' compiled for " << t.name() << " although it is broken");
  return "";
}

/// The path after "generated source saved to: " in a message.
std::string saved_path(const std::string& msg) {
  const std::string tag = "generated source saved to: ";
  size_t at = msg.find(tag);
  if (at == std::string::npos) return "";
  std::string rest = msg.substr(at + tag.size());
  return rest.substr(0, rest.find('\n'));
}

/// Breaks the first user statement of `m` (a line right after a #line into the fixture
/// header that multiplies); returns the user line it maps to.
int break_user_line(ModuleSource& m) {
  std::istringstream in(m.text);
  std::string line, out, file;
  int user_line = 0, pending = 0;
  while (std::getline(in, line)) {
    if (line.rfind("#line ", 0) == 0 && line.find("fixture_kernels.hpp") != std::string::npos)
      pending = std::stoi(line.substr(6));
    else if (pending && !user_line && line.find("p_a * ") != std::string::npos) {
      line.replace(line.find("p_a * "), 6, "kjit_undefined_builtin(p_a) * ");
      user_line = pending;
    } else if (line.rfind("#line ", 0) != 0) {
      pending = 0;
    }
    out += line + "\n";
  }
  m.text = out;
  m.identity.clear();  // the text is the identity: the broken module has its own key
  return user_line;
}

}  // namespace

TEST_CASE("a compile error in user code names the user's file:line and the generated line") {
  kjit::test::TempDir dir("cerr");
  CacheConfig cfg;
  cfg.dir = dir.path();
  cfg.on_warning = [](const std::string&) {};
  Cache cache(cfg);
  ModuleSource m = kjit::test::saxpy_module("user_error");
  int user_line = break_user_line(m);
  REQUIRE(user_line > 0);
  for (Target t : {Target::cubin(90), Target::host()}) {
    CAPTURE(t.name());
    std::string msg = compile_error(m, t, cache);
    CAPTURE(msg);
    CHECK(msg.find("fixture_kernels.hpp:" + std::to_string(user_line) + ": error:") != std::string::npos);
    CHECK(msg.find("kjit_undefined_builtin") != std::string::npos);
    CHECK(msg.find("generated line ") != std::string::npos);
    // Of the generated lines from that user line, exactly the offending one is quoted.
    size_t quoted = msg.find("generated line ");
    REQUIRE(quoted != std::string::npos);
    CHECK(msg.find("generated line ", quoted + 1) == std::string::npos);
    CHECK(msg.substr(quoted, msg.find('\n', quoted) - quoted).find("kjit_undefined_builtin(p_a) * ") !=
          std::string::npos);
    CHECK(msg.find("module 'user_error' for " + t.name()) != std::string::npos);
    CHECK(msg.find("kjit bug") == std::string::npos);
    std::string saved = saved_path(msg);
    REQUIRE(!saved.empty());
    CHECK(kjit::test::read_file(saved) == m.text);
  }
  CHECK(cache.stats().compile_failures == 2);
  CHECK(cache.list().empty());  // nothing is published for a failed compile
}

TEST_CASE("a broken prelude is reported as an error in kjit's generated code") {
  kjit::test::TempDir dir("prelude");
  CacheConfig cfg;
  cfg.dir = dir.path();
  Cache cache(cfg);
  ModuleSource m = kjit::test::saxpy_module("broken");
  size_t at = m.text.find("namespace kj {");
  REQUIRE(at != std::string::npos);
  m.text.insert(at + 14, " int kjit_broken_prelude = ; ");
  m.identity.clear();
  for (Target t : {Target::ptx(90), Target::host()}) {
    CAPTURE(t.name());
    std::string msg = compile_error(m, t, cache);
    CAPTURE(msg);
    CHECK(msg.find("kjit_broken_prelude") != std::string::npos);
    CHECK(msg.find("generated line ") != std::string::npos);
    CHECK(msg.find("kjit bug") != std::string::npos);
    CHECK(!saved_path(msg).empty());
  }
}

TEST_CASE("compiler logs are parsed in NVRTC and GCC formats") {
  auto d = parse_diagnostics(
      "/src/k.hpp(12): error: identifier \"foo\" is undefined\n"
      "    const float v = foo(x);\n"
      "/src/k.hpp(13): warning #550-D: variable set but never used\n"
      "kjit_module_m.cu:40:7: error: expected ';' before '}' token\n"
      "In file included from x.cpp:1:\n"
      "y.h:3: fatal error: z.h: No such file or directory\n"
      "note: something\n");
  REQUIRE(d.size() == 3);
  CHECK(d[0].file == "/src/k.hpp");
  CHECK(d[0].line == 12);
  CHECK(d[0].message == "identifier \"foo\" is undefined");
  CHECK(d[1].file == "kjit_module_m.cu");
  CHECK(d[1].line == 40);
  CHECK(d[2].file == "y.h");
  CHECK(d[2].line == 3);
}

TEST_CASE("#line directives map user lines back to generated lines") {
  const std::string text =
      "int a;\n"                  // 1  main:1
      "#line 10 \"/u/k.hpp\"\n"   // 2
      "int b;\n"                  // 3  k.hpp:10
      "int c;\n"                  // 4  k.hpp:11
      "#line 5 \"main.cu\"\n"     // 5
      "int d;\n"                  // 6  main:5
      "#line 10 \"/u/k.hpp\"\n"   // 7
      "int e;\n";                 // 8  k.hpp:10
  CHECK(generated_lines_for(text, "main.cu", "/u/k.hpp", 10) == std::vector<int>{3, 8});
  CHECK(generated_lines_for(text, "main.cu", "/u/k.hpp", 11) == std::vector<int>{4});
  CHECK(generated_lines_for(text, "main.cu", "k.hpp", 11) == std::vector<int>{4});  // base name
  CHECK(generated_lines_for(text, "main.cu", "main.cu", 1) == std::vector<int>{1});
  CHECK(generated_lines_for(text, "main.cu", "main.cu", 5) == std::vector<int>{6});
  CHECK(generated_lines_for(text, "main.cu", "other.hpp", 10).empty());
}

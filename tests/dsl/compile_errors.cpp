// Mistakes that C++ itself can catch are compile errors at the user's line with kjit's
// message: mixing element types, indexing an N-D array with the wrong number of indices,
// storing a value of another type into an array.
#include <doctest/doctest.h>

#include "test_support.hpp"

namespace {

/// Compiles `body` inside a kernel; returns the compiler's output (the compile must fail).
std::string compile_failure(const std::string& name, const std::string& params, const std::string& body,
                            int* body_line) {
  kjit::test::TempDir dir("compile-errors");
  const std::string file = dir / (name + ".cpp");
  std::string text = "#include <kjit/kjit.hpp>\nnamespace ce {\nusing namespace kjit::dsl;\n"
                     "KJIT_KERNEL(" + name + ", " + params + ") {\n";
  *body_line = 5;  // the line `body` starts on
  text += body + "\n}\n}\n";
  kjit::test::write_file(file, text);
  std::string out;
  int status = kjit::test::run_command(std::string(KJIT_TEST_CXX) + " -std=c++17 -fsyntax-only " +
                                           KJIT_TEST_INCLUDES + " -I/usr/include " + file, &out);
  CHECK_MESSAGE(status != 0, "expected a compile error, the snippet compiled:\n" << text);
  return out;
}

void expect(const std::string& out, const std::string& file_line, const std::string& message) {
  INFO(out);
  CHECK(out.find(file_line) != std::string::npos);
  CHECK(out.find(message) != std::string::npos);
}

}  // namespace

TEST_CASE("adding a Vec3f to an Int does not compile, at the user's line") {
  int line;
  std::string out = compile_failure("mix", "(Array<Vec3f> v, Array<Int> n)",
                                    "  Int i = tid();\n  Vec3f bad = v[i] + n[i];\n  v[i] = bad;", &line);
  expect(out, "mix.cpp:" + std::to_string(line + 1), "cannot add a scalar to a vector");
}

TEST_CASE("adding a Float to an Int does not compile, with a message") {
  int line;
  std::string out = compile_failure("mix2", "(Array<Float> x, Array<Int> n)",
                                    "  Int i = tid();\n  x[i] = x[i] + n[i];", &line);
  expect(out, "mix2.cpp:" + std::to_string(line + 1), "operands of + have different element types");
}

TEST_CASE("indexing a 2-D array with one index does not compile") {
  int line;
  std::string out = compile_failure("index", "(Array<Float, 2> x, Array<Float> out)",
                                    "  Int i = tid();\n  out[i] = x(i);", &line);
  expect(out, "index.cpp:" + std::to_string(line + 1), "wrong number of indices");
  std::string out2 = compile_failure("index_brackets", "(Array<Float, 2> x, Array<Float> out)",
                                     "  Int i = tid();\n  out[i] = x[i];", &line);
  expect(out2, "index_brackets.cpp:" + std::to_string(line + 1), "a[i] indexes a 1-D array");
}

TEST_CASE("storing a Float into an Array<Int> does not compile") {
  int line;
  std::string out = compile_failure("store", "(Array<Int> n, Array<Float> x)",
                                    "  Int i = tid();\n  n[i] = x[i];", &line);
  expect(out, "store.cpp:" + std::to_string(line + 1), "cannot store a value of another element type");
}

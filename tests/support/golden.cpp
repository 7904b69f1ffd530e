// Golden files under tests/golden/, with an update switch.
#include "golden.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "test_support.hpp"

namespace kjit::test {

std::string compare_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(KJIT_SOURCE_DIR) + "/tests/golden/" + name;
  const char* update = std::getenv("KJIT_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    write_file(path, actual);
    return "";
  }
  if (!exists(path))
    return "golden file " + path + " is missing; run the test with KJIT_UPDATE_GOLDEN=1 to create it";
  const std::string expected = read_file(path);
  if (expected == actual) return "";
  std::istringstream a(actual), e(expected);
  std::string la, le;
  int line = 1;
  while (true) {
    bool ga = bool(std::getline(a, la)), ge = bool(std::getline(e, le));
    if (!ga && !ge) break;
    if (!ga || !ge || la != le)
      return "output differs from " + path + " at line " + std::to_string(line) + ":\n  expected: " +
             (ge ? le : "<end>") + "\n  actual:   " + (ga ? la : "<end>") +
             "\nIf the change is intended, rerun with KJIT_UPDATE_GOLDEN=1 and review the diff.";
    ++line;
  }
  return "output differs from " + path;
}

}  // namespace kjit::test

// Helpers of the cli tests: running commands, copying caches, the shared example cache.
#include "cli_fixtures.hpp"

#include <doctest/doctest.h>

namespace kjit::test::cli {

nlohmann::json Run::json() const {
  try {
    return nlohmann::json::parse(out);
  } catch (const std::exception& e) {
    FAIL_CHECK("not JSON (" << e.what() << "):\n" << out << "\nstderr:\n" << err);
    return nlohmann::json();
  }
}

Run run(const std::string& command) {
  static TempDir scratch("cli-run");
  static int counter = 0;
  std::string out = scratch / ("out-" + std::to_string(counter) + ".txt");
  std::string err = scratch / ("err-" + std::to_string(counter++) + ".txt");
  Run r;
  // The subshell keeps run_command's own "2>&1" from folding stderr into stdout.
  r.status = run_command("( (" + command + ") >" + out + " 2>" + err + " )");
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

Run run_kjit(const std::string& arguments, const std::string& environment) {
  return run(environment + (environment.empty() ? "" : " ") + kTool + " " + arguments);
}

void copy_cache(const std::string& from, const std::string& to) {
  REQUIRE(run_command("rm -rf '" + to + "' && cp -a '" + from + "' '" + to + "'") == 0);
}

const ExampleCache& example_cache() {
  static const ExampleCache cache = [] {
    ExampleCache c;
    c.folder = std::make_unique<TempDir>("cli-example-cache");
    c.dir = *c.folder / "cache";
    c.first = run_kjit("precompile " + kDemoLibrary + " --arch sm_80,sm_90 --json --cache-dir " + c.dir);
    return c;
  }();
  return cache;
}

}  // namespace kjit::test::cli

// Killing `kjit precompile` kills the compilers it started, and everything they started.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "cli_fixtures.hpp"

using namespace kjit::test;
using namespace kjit::test::cli;

namespace {

/// Whether `pid` is gone (or a zombie nobody reaped: it runs no more).
bool gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (text.empty()) return true;
  size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && (text[close + 2] == 'Z' || text[close + 2] == 'X');
}

std::vector<pid_t> read_pids(const std::string& path) {
  std::ifstream in(path);
  std::vector<pid_t> pids;
  for (long p; in >> p;) pids.push_back(pid_t(p));
  return pids;
}

}  // namespace

TEST_CASE("killing kjit precompile leaves no compiler running, nor what the compiler started") {
  for (int sig : {SIGKILL, SIGTERM}) {
    CAPTURE(sig);
    TempDir dir("kill");
    // A "compiler" that starts a grandchild (as g++ starts cc1plus) and never finishes.
    const std::string cxx = dir / "slow-cxx";
    {
      std::ofstream s(cxx);
      s << "#!/bin/sh\n"
           "if [ \"$1\" = --version ]; then echo 'slow-cxx 1.0'; exit 0; fi\n"
           "echo $$ >> '" << (dir / "pids") << "'\n"
           "sleep 300 &\n"
           "echo $! >> '" << (dir / "pids") << "'\n"
           "wait\n";
    }
    REQUIRE(::chmod(cxx.c_str(), 0700) == 0);
    const std::string cache = dir / "cache";
    pid_t kjit = ::fork();
    REQUIRE(kjit >= 0);
    if (kjit == 0) {
      ::setenv("KJIT_CXX", cxx.c_str(), 1);
      ::setenv("KJIT_CACHE_DIR", cache.c_str(), 1);
      std::freopen("/dev/null", "w", stdout);
      ::execl(kTool.c_str(), kTool.c_str(), "precompile", kTestLibrary.c_str(), "--cpu", "--module", "cli_ok",
              (char*)nullptr);
      ::_exit(127);
    }
    std::vector<pid_t> pids;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while ((pids = read_pids(dir / "pids")).size() < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE_MESSAGE(pids.size() >= 2, "the compiler never started");
    REQUIRE(::kill(kjit, sig) == 0);
    int status = 0;
    REQUIRE(::waitpid(kjit, &status, 0) == kjit);
    CHECK(WIFSIGNALED(status));
    bool all_gone = false;
    for (int i = 0; i < 250 && !all_gone; ++i) {
      all_gone = true;
      for (pid_t p : pids) all_gone = all_gone && gone(p);
      if (!all_gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CHECK_MESSAGE(all_gone, "a compiler process outlived kjit");
    for (pid_t p : pids)
      if (!gone(p)) ::kill(p, SIGKILL);  // do not leave them behind when the check fails
  }
}

// Targets: parsing, names, and errors that name the architectures NVRTC supports.
#include <doctest/doctest.h>

#include <algorithm>

#include "kjit/compiler/target.hpp"
#include "kjit/error.hpp"

using kjit::compiler::Target;
using kjit::compiler::TargetKind;

namespace {

/// The message of the error Target::parse throws for `text` (checks it is a User error).
std::string parse_error(const std::string& text) {
  try {
    Target::parse(text);
  } catch (const kjit::Error& e) {
    CHECK(e.kind() == kjit::ErrorKind::User);
    return e.what();
  }
  FAIL("Target::parse accepted '" << text << "'");
  return "";
}

}  // namespace

TEST_CASE("targets parse and print") {
  CHECK(Target::parse("sm_90") == Target::cubin(90));
  CHECK(Target::parse("sm_80").kind == TargetKind::Cubin);
  CHECK(Target::parse("compute_90") == Target::ptx(90));
  CHECK(Target::parse("cpu") == Target::host());
  CHECK_FALSE(Target::host().is_gpu());
  for (const char* name : {"sm_75", "sm_80", "sm_86", "sm_90", "compute_80", "compute_90", "cpu"})
    CHECK(Target::parse(name).name() == name);
}

TEST_CASE("supported architectures come from NVRTC") {
  const auto& archs = kjit::compiler::nvrtc_supported_archs();
  REQUIRE_FALSE(archs.empty());
  CHECK(std::is_sorted(archs.begin(), archs.end()));
  CHECK(std::find(archs.begin(), archs.end(), 90) != archs.end());
  CHECK(std::find(archs.begin(), archs.end(), 13) == archs.end());
}

TEST_CASE("bad targets are User errors that name the supported architectures") {
  for (const char* bad : {"sm_13", "bogus", "sm_999", "sm_", "sm_90a", "compute_", "SM_90", ""}) {
    CAPTURE(bad);
    std::string msg = parse_error(bad);
    CHECK(msg.find("'" + std::string(bad) + "'") != std::string::npos);
    CHECK(msg.find("sm_75") != std::string::npos);
    CHECK(msg.find("sm_90") != std::string::npos);
  }
  CHECK(parse_error("sm_999").find("not supported") != std::string::npos);
  CHECK(parse_error("sm_13").find("not supported") != std::string::npos);
  CHECK(parse_error("bogus").find("not a target name") != std::string::npos);
}

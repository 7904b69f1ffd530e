// The suite's NVRTC builds of whole modules for real GPU targets (no GPU needed): each test that
// proves a module's text compiles for the GPU asks the same of the artifacts.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <string_view>

#include "kjit/compiler/build.hpp"

namespace kjit::test {

/// Builds `s` for sm_80 and sm_90 in NVRTC's fast-compile mode (the suite checks that the text
/// compiles, not how fast it runs) and checks that each image is an ELF cubin naming every
/// entry point; `what` names the module in failure messages.
inline void check_builds_for_gpus(const compiler::ModuleSource& s, const std::string& what) {
  compiler::CompileOptions fast;
  fast.fast_compile = true;
  for (const char* target : {"sm_80", "sm_90"}) {
    INFO(what << " for " << target);
    compiler::Artifact a = compiler::build_module(s, compiler::Target::parse(target), fast);
    REQUIRE(a.image.size() > 16);
    CHECK(std::memcmp(a.image.data(), "\x7f" "ELF", 4) == 0);
    std::string_view image(a.image.data(), a.image.size());
    for (const std::string& e : s.entry_points) CHECK_MESSAGE(image.find(e) != std::string_view::npos, e);
  }
}

}  // namespace kjit::test

// The message of the User error a launch throws, for the runtime's error tests.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "kjit/error.hpp"

namespace kjit::test {

/// Runs `f`, which must throw a kjit::Error of kind User; returns its message.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    return e.what();
  }
  FAIL("no error");
  return "";
}

}  // namespace kjit::test

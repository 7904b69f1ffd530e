// Helpers the forward-mode suites share: the autodiff suites' seeded inputs, and "the
// forward-mode checks of check_gradients passed, for these many inputs".
#pragma once

#include <doctest/doctest.h>

#include <set>
#include <string>

#include "gradient_support.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"

namespace forward_support {

using autodiff_support::random_values;

/// The report passed, the kernel has a tangent, `inputs` inputs had their tangents checked,
/// each array input also against the adjoint, and every check compared something.
inline void expect_tangents_pass(const kjit::GradCheckReport& r, size_t inputs) {
  INFO(r.str());
  CHECK(r.passed());
  CHECK(r.tangent_error.empty());
  std::set<std::string> tangent_inputs;
  for (const kjit::GradCheckParam& p : r.tangents) {
    CHECK(p.checked > 0);
    if (p.check == "tangent") tangent_inputs.insert(p.name.substr(0, p.name.find(" -> ")));
  }
  CHECK(tangent_inputs.size() == inputs);
  for (const kjit::GradCheckParam& p : r.params) CHECK(p.checked > 0);
}

}  // namespace forward_support

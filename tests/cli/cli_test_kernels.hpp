// Kernels of the cli tests' own kernel library: a module that builds (precompiled at build
// time by kjit_precompile) and one whose kernel cannot be traced (a failed build to report).
#pragma once

#include <kjit/kjit.hpp>

namespace cli_ok {
using namespace kjit::dsl;
KJIT_MODULE(cli_ok)

KJIT_KERNEL(scale, (Array<Float> x, Float s, Array<Float> out)) {
  Int i = tid();
  out[i] = s * x[i];
}
}  // namespace cli_ok

namespace cli_broken {
using namespace kjit::dsl;
KJIT_MODULE(cli_broken)

// A plain value assigned inside a branch: a tracing error naming this file and line.
KJIT_KERNEL(assign_in_branch, (Array<Float> x, Array<Float> out)) {
  Float a = 0.0f;
  If(x[tid()] > 0.0f, [&] { a = x[tid()] * 2.0f; });
  out[tid()] = a;
}
}  // namespace cli_broken

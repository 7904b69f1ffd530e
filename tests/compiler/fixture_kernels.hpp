// Kernels the compiler and cache tests generate real modules from (module "fixture_kernels").
#pragma once

#include <kjit/dsl.hpp>

namespace kjit_fixture {
using namespace kjit::dsl;

KJIT_KERNEL(saxpy, (Array<Float> x, Array<Float> y, Float a, Array<Float> out)) {
  Int i = tid();
  out[i] = a * x[i] + y[i];
}

KJIT_KERNEL(scale, (Array<Float> x, Float s, Array<Float> out)) {
  Int i = tid();
  out[i] = x[i] * s;
}

}  // namespace kjit_fixture

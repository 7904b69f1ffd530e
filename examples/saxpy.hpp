// examples/saxpy.hpp — out = a * x + y: the smallest useful kernel, in float32 and float64.
#pragma once

#include <kjit/dsl.hpp>

namespace demo {
using namespace kjit::dsl;

KJIT_KERNEL(saxpy, (Array<Float> x, Array<Float> y, Float a, Array<Float> out)) {
  Int i = tid();
  out[i] = a * x[i] + y[i];
}

KJIT_KERNEL(daxpy, (Array<Double> x, Array<Double> y, Double a, Array<Double> out)) {
  Int i = tid();
  out[i] = a * x[i] + y[i];
}

}  // namespace demo

// kjit/dsl.hpp — everything a kernel header needs: value handles, arrays, math, geometry,
// random numbers, control flow, device functions, structs, launch indices and KJIT_KERNEL.
// Kernels use `using namespace kjit::dsl;`. Light on purpose: it includes no <string>, no
// containers, and none of the IR's headers (tests/lint measures it with the compiler).
#pragma once

#include "kjit/dsl/aliases.hpp"
#include "kjit/dsl/array.hpp"
#include "kjit/dsl/control_flow.hpp"
#include "kjit/dsl/functions.hpp"
#include "kjit/dsl/geometry.hpp"
#include "kjit/dsl/launch_index.hpp"
#include "kjit/dsl/linalg.hpp"
#include "kjit/dsl/math.hpp"
#include "kjit/dsl/operators.hpp"
#include "kjit/dsl/random.hpp"
#include "kjit/dsl/structs.hpp"
#include "kjit/dsl/utility.hpp"
#include "kjit/dsl/value.hpp"
#include "kjit/dsl/var.hpp"
#include "kjit/dsl/kernel_handle.hpp"
#include "kjit/types.hpp"

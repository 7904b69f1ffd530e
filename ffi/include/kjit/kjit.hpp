// kjit/kjit.hpp — the header programs include: the kernel DSL (KJIT_KERNEL, Float, Array,
// If, For, ...), devices, arrays, launches forward and adjoint, gradient checks and graphs.
// Kernel headers need only <kjit/dsl.hpp>; the XLA FFI API (JAX) is opt-in: <kjit/ffi.hpp>.
#pragma once

#include "kjit/dsl.hpp"
#include "kjit/runtime/device.hpp"
#include "kjit/runtime/devices.hpp"
#include "kjit/runtime/launch.hpp"
#include "kjit/runtime/modules.hpp"
#include "kjit/runtime/ndarray.hpp"
#include "kjit/runtime/stream.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "kjit/runtime/graph.hpp"

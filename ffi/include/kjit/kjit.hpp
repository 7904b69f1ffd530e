// kjit/kjit.hpp — the header programs include: the kernel DSL (KJIT_KERNEL, Float, Array,
// If, For, ...), devices, streams, arrays, and launches forward and adjoint. Light on purpose
// (no <string>, <memory> or <functional>; see docs/BENCHMARKS.md, "Header size"). The rest is
// opt-in, one header each:
//   <kjit/runtime/gradcheck.hpp>  check_gradients: adjoints against finite differences
//   <kjit/runtime/graph.hpp>      CUDA graphs: capture, replay, the graph cache
//   <kjit/runtime/modules.hpp>    building and loading modules ahead of their first launch
//   <kjit/runtime/devices.hpp>    the CUDA driver and devices of this machine
//   <kjit/runtime/dlpack.hpp>     DLPack: other libraries' tensors as arrays, and back
//   <kjit/runtime/cpu_threads.hpp> the cpu device's threads: kjit's pool or an OpenMP team
//   <kjit/kernel.hpp>             kernel definitions and the registry (names, parameters)
//   <kjit/ffi.hpp>                the XLA FFI API (JAX)
// Kernel headers need only <kjit/dsl.hpp>.
#pragma once

#include "kjit/dsl.hpp"
#include "kjit/runtime/device.hpp"
#include "kjit/runtime/launch.hpp"
#include "kjit/runtime/ndarray.hpp"
#include "kjit/runtime/stream.hpp"

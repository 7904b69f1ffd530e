// kjit/ffi.hpp — opt-in header for programs and libraries that serve kjit kernels to JAX:
// <kjit/kjit.hpp> plus the XLA FFI API (handlers, callables, callbacks). It is the only
// installed header that reaches the XLA ABI mirror (kjit/ffi/xla_abi.hpp).
#pragma once

#include "kjit/ffi/ffi.hpp"
#include "kjit/kjit.hpp"

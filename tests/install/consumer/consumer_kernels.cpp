// The consumer's kernel library: loading it registers its kernels (kjit precompile reads it).
#include "consumer_kernels.hpp"
// A kernel library for JAX also includes the opt-in FFI header: it must compile from the install.
#include <kjit/ffi.hpp>

// The struct-taking kernels of the JAX tests (jax_struct_kernels.hpp) in their kernel library.
#include <kjit/ffi.hpp>

#include "jax_struct_kernels.hpp"

// The example kernels compiled into a kernel library: loading libdemo_kernels.so registers
// them, so `kjit precompile`, `kjit list` and the JAX shim can find them.
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

// The kernel library examples/warp/cupy_example.py loads with kjit.arrays
// (libwarp_cupy_interop.so): the kernel of Warp's core/example_cupy.py.
#include "kernels.hpp"

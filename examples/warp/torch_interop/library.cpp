// The kernel library examples/warp/torch_example.py loads with kjit.torch
// (libwarp_torch_interop.so): the kernel of Warp's core/example_torch.py.
#include "kernels.hpp"

// kjit/codegen/tangent.hpp — forward-mode autodiff as an IR -> IR transform: from a kernel,
// its tangent kernel, an ordinary kernel whose parameters are the kernel's followed by one
// tangent per parameter, and which computes the kernel's effects and their tangents in one
// launch (docs/AUTODIFF.md, "Forward mode").
#pragma once

#include <string>

#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// The name of the tangent kernel of kernel `kernel_name`: "demo::saxpy" -> "demo::saxpy.tangent".
std::string tangent_name(const std::string& kernel_name);
/// The module that holds the tangent kernels of module `module`: "springs" -> "springs.tangent".
std::string tangent_module_name(const std::string& module);
/// Whether `module` is the module of another module's tangent kernels.
bool is_tangent_module(const std::string& module);

/// The tangent kernel of `kernel` (traced, verified IR):
///
///   tangent: (launch_bounds_t dim, params..., one tangent per param...)
///
/// with the layout of the adjoint's parameters: an array's tangent is an array of the same
/// type and shape, a value's tangent a value of its type (a struct's array fields hold the
/// arrays' tangents: reads and writes through a field use the tangent's field); the slot of
/// a non-differentiable parameter (integers, bools) is never read. Its body runs the kernel's body (stores,
/// atomics, prints: one launch replaces the forward launch) and beside every floating value
/// its tangent: loads read the tangent arrays at the same indices, stores and atomic adds
/// write them, Vars carry their tangents through branches and loops, device functions are
/// called through their tangent functions (or the user's `.jvp`), and every builtin follows
/// its tangent rule (builtin_codegen.cpp). The result is verified IR that every emitter, the
/// adjoint (second derivatives) and the tangent transform itself (forward over forward)
/// accept. Constructs forward mode cannot differentiate (atomic_min / atomic_max / exch / cas
/// of floats, a used atomic result, the tangent of a dual-evaluated builtin's tangent) are a
/// User error naming the kernel and the line.
ir::Function tangent_kernel(const ir::Function& kernel);

}  // namespace kjit::codegen

// The parts of an XLA call's layout both directions decode the same way from its attributes:
// in/out arrays (kjit_in_out), traced values (kjit_traced) and the arrays' order
// (kjit_array_order); and the prefix of every message about a call.
#pragma once

#include <cstdint>
#include <string>

#include "launch_plan.hpp"

namespace kjit::ffi::detail {

/// "kjit kernel 'k': " or "kjit adjoint of kernel 'k': ", before every message about a call.
std::string call_prefix(const KernelInfo& k, bool adjoint);

/// Everything both directions decode the same way.
struct Layout {
  int64_t io[kMaxParams];
  int n_io = 0;
  int64_t traced[kMaxParams];  ///< value parameters passed as buffers, in order
  int n_traced = 0;
  bool is_traced[kMaxParams] = {};
  int nin = 0;     ///< input arrays (in/out included)
  int n_pure = 0;  ///< pure outputs
  bool is_in_out[kMaxParams] = {};
  /// The array parameters in the order the call passes them (inputs, then pure outputs):
  /// kjit_array_order, else the kernel's; pos[param] is an array parameter's place in it.
  int order[kMaxParams];
  int pos[kMaxParams];
};

/// The in/out parameter indices from kjit_in_out into io (sorted, array inputs); their count.
int read_in_out(const KernelInfo& k, bool adjoint, const xla::Attrs& attrs, int64_t* io);
/// The call's order of the array parameters (kjit_array_order, else the kernel's) into `L`.
void read_order(const KernelInfo& k, bool adjoint, const xla::Attrs& attrs, Layout& L);
/// The names of the array parameters at places [from, to) of the call's order.
std::string order_names(const KernelInfo& k, const Layout& L, int from, int to);
/// The traced value parameters from kjit_traced (sorted, value parameters) into `L`.
void read_traced(const KernelInfo& k, bool adjoint, const xla::Attrs& attrs, Layout& L);

}  // namespace kjit::ffi::detail

// Reading a call's layout attributes (call_layout.hpp).
#include "call_layout.hpp"

#include <vector>

namespace kjit::ffi::detail {

std::string call_prefix(const KernelInfo& k, bool adjoint) {
  return std::string(adjoint ? "kjit adjoint of kernel '" : "kjit kernel '") + k.name + "': ";
}

/// The in/out parameter indices from kjit_in_out (sorted, array inputs).
int read_in_out(const KernelInfo& k, bool adjoint, const xla::Attrs& attrs, int64_t* io) {
  AttrRef a = find_attr(attrs, kAttrInOut);
  if (!a) return 0;
  int n = attr_int_array(a, kAttrInOut, io, kMaxParams);
  for (int i = 0; i < n; ++i) {
    if (io[i] < 0 || io[i] >= int64_t(k.params.size()) || !k.params[size_t(io[i])].is_array)
      invalid(call_prefix(k, adjoint) + "attribute '" + kAttrInOut + "' names parameter " + std::to_string(io[i]) +
              ", which is not an array parameter");
    if (i && io[i] <= io[i - 1])
      invalid(call_prefix(k, adjoint) + "attribute '" + kAttrInOut + "' must list parameters in increasing order");
  }
  return n;
}



/// The call's order of the array parameters from kjit_array_order (a permutation of them),
/// else the kernel's own order.
void read_order(const KernelInfo& k, bool adjoint, const xla::Attrs& attrs, Layout& L) {
  const int A = int(k.arrays.size());
  for (int i = 0; i < A; ++i) L.order[i] = k.arrays[size_t(i)];
  if (AttrRef a = find_attr(attrs, kAttrArrayOrder)) {
    int64_t order[kMaxParams];
    const int n = attr_int_array(a, kAttrArrayOrder, order, kMaxParams);
    if (n != A)
      invalid(call_prefix(k, adjoint) + "attribute '" + kAttrArrayOrder + "' lists " + std::to_string(n) +
              " parameters, but the kernel has " + std::to_string(A) + " array parameters (" + k.names(k.arrays) + ")");
    bool seen[kMaxParams] = {};
    for (int i = 0; i < n; ++i) {
      if (order[i] < 0 || order[i] >= int64_t(k.params.size()) || !k.params[size_t(order[i])].is_array)
        invalid(call_prefix(k, adjoint) + "attribute '" + kAttrArrayOrder + "' names parameter " + std::to_string(order[i]) +
                ", which is not an array parameter");
      if (seen[order[i]])
        invalid(call_prefix(k, adjoint) + "attribute '" + kAttrArrayOrder + "' names parameter '" +
                k.params[size_t(order[i])].name + "' twice");
      seen[order[i]] = true;
      L.order[i] = int(order[i]);
    }
  }
  for (int i = 0; i < A; ++i) L.pos[L.order[i]] = i;
}

/// The names of the array parameters at places [from, to) of the call's order.
std::string order_names(const KernelInfo& k, const Layout& L, int from, int to) {
  return k.names(std::vector<int>(L.order + from, L.order + to));
}

/// The traced value parameters from kjit_traced (sorted, value parameters) into `L`.
void read_traced(const KernelInfo& k, bool adjoint, const xla::Attrs& attrs, Layout& L) {
  AttrRef a = find_attr(attrs, kAttrTraced);
  if (!a) return;
  L.n_traced = attr_int_array(a, kAttrTraced, L.traced, kMaxParams);
  for (int i = 0; i < L.n_traced; ++i) {
    if (L.traced[i] < 0 || L.traced[i] >= int64_t(k.params.size()) || k.params[size_t(L.traced[i])].is_array)
      invalid(call_prefix(k, adjoint) + "attribute '" + kAttrTraced + "' names parameter " + std::to_string(L.traced[i]) +
              ", which is not a value parameter");
    if (i && L.traced[i] <= L.traced[i - 1])
      invalid(call_prefix(k, adjoint) + "attribute '" + kAttrTraced + "' must list parameters in increasing order");
    L.is_traced[L.traced[i]] = true;
  }
}

}  // namespace kjit::ffi::detail

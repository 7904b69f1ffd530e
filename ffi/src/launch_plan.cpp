// Matching an XLA call frame to a kernel's parameters: counts, dtypes, ranks, inner dims,
// vmap batch dims, static attributes, launch dims; then packing in the kernel ABI.
#include "launch_plan.hpp"

#include <cstring>

#include "call_layout.hpp"
#include "kjit/runtime/internal/value_slot.hpp"

namespace kjit::ffi::detail {

namespace {

/// One array buffer bound to a parameter.
struct Bound {
  const xla::Buffer* buf = nullptr;
  int param = -1;
  int batch_rank = 0;  ///< leading dims beyond the parameter's rank
};

/// The buffer's element count; saturates at INT64_MAX (a frame may claim any dims).
int64_t elements(const xla::Buffer& b) {
  int64_t n = 1;
  for (int64_t d = 0; d < b.rank; ++d)
    if (__builtin_mul_overflow(n, b.dims[d], &n)) return INT64_MAX;
  return n;
}

}  // namespace

void struct_param(const Where& pre, const ParamInfo& p, const char* role) {
  invalid(pre + role + " '" + p.name + (p.is_array ? "' (" + p.type.str() + ") holds struct " : "' is struct ") +
          p.element_str() + ", which the XLA FFI cannot pass: structs are not supported from JAX");
}

int check_array(const Where& pre, const ParamInfo& p, const xla::Buffer& b, const char* role) {
  if (p.dtype == xla::kInvalid) struct_param(pre, p, role);
  if (b.dtype != p.dtype)
    invalid(pre + "Invalid data type for " + role + " '" + p.name + "', expected " + dtype_name(p.dtype) +
            ", got " + dtype_name(b.dtype));
  if (b.rank < p.rank() || b.rank > p.rank() + kMaxBatchRank)
    invalid(pre + "Invalid dimensionality for " + role + " '" + p.name + "', expected " +
            std::to_string(p.rank()) + " dimensions" +
            (p.inner_rank ? " (" + std::to_string(p.ndim) + " array + " + std::to_string(p.inner_rank) +
                                " for " + p.element_str() + ")"
                          : std::string()) +
            ", got " + std::to_string(b.rank));
  for (int d = 0; d < p.inner_rank; ++d)
    if (b.dims[b.rank - p.inner_rank + d] != p.inner[d])
      invalid(pre + "Invalid inner dimensions for " + role + " '" + p.name + "', expected " + p.inner_str() +
              " for " + p.element_str() + ", got " +
              shape_str(b.dims + (b.rank - p.inner_rank), p.inner_rank));
  for (int d = 0; d < p.ndim; ++d)
    if (b.dims[b.rank - p.rank() + d] > INT32_MAX)
      invalid(pre + "array argument '" + p.name + "' has extent " +
              std::to_string(b.dims[b.rank - p.rank() + d]) + ", beyond the int32 extents kernels index");
  if (!b.data && elements(b) > 0)
    invalid(pre + role + " '" + p.name + "' has no data but shape " + shape_str(b.dims, b.rank));
  return int(b.rank - p.rank());
}

/// Writes the array descriptor of `b` (batch item 0) for parameter `p` into `slot`.
namespace {

void write_array(kj::array_t<void>* slot, const ParamInfo& p, const xla::Buffer& b, int batch_rank) {
  std::memset(slot, 0, sizeof *slot);
  slot->data = b.data;
  slot->ndim = p.ndim;
  int64_t stride = p.element_bytes;
  for (int d = p.ndim - 1; d >= 0; --d) {
    slot->shape[d] = kj_int32(b.dims[batch_rank + d]);
    slot->strides[d] = stride;
    stride *= b.dims[batch_rank + d];
  }
}

/// Whether attribute values of `got` carry parameter values of `want`: the same dtype, or the
/// raw bits of a 16-bit float as uint16 (XLA's FFI decodes no 16-bit float attribute).
bool carries(xla::DataType got, xla::DataType want) {
  return got == want || ((want == xla::kF16 || want == xla::kBF16) && got == xla::kU16);
}

}  // namespace

void read_static(const Where& pre, const xla::Attrs& attrs, const ParamInfo& p, unsigned char* out) {
  if (p.is_struct()) struct_param(pre, p, "static argument");
  AttrRef a = find_attr(attrs, p.name);
  if (!a)
    invalid(pre + "Missing static argument '" + p.name + "' (" + p.type.str() + "): static arguments travel as "
            "typed attributes named after the parameter");
  // A scalar travels as a scalar attribute, or as a 1-element array (uint64 values above
  // INT64_MAX, which JAX's scalar attributes cannot hold); a vector as an array.
  if (p.lanes == 1 && a.type == xla::kAttrScalar) {
    const auto* s = static_cast<const xla::Scalar*>(a.value);
    if (!carries(s->dtype, p.dtype))
      invalid(pre + "Invalid data type for static argument '" + p.name + "', expected " + dtype_name(p.dtype) +
              ", got " + dtype_name(s->dtype));
    if (!s->value) invalid(pre + "static argument '" + p.name + "' has no value");
    std::memcpy(out, s->value, size_t(p.element_bytes));
    return;
  }
  if (a.type != xla::kAttrArray) {
    if (p.lanes == 1)
      invalid(pre + "static argument '" + p.name + "' must be a scalar attribute of " + dtype_name(p.dtype));
    invalid(pre + "static argument '" + p.name + "' (" + p.type.str() + ") must be an array attribute of " +
            std::to_string(p.lanes) + " " + dtype_name(p.dtype) + " values");
  }
  const auto* arr = static_cast<const xla::Array*>(a.value);
  if (!carries(arr->dtype, p.dtype))
    invalid(pre + "Invalid data type for static argument '" + p.name + "', expected " + dtype_name(p.dtype) +
            ", got " + dtype_name(arr->dtype));
  if (arr->size != size_t(p.lanes) || !arr->data)
    invalid(pre + "Invalid inner dimensions for static argument '" + p.name + "', expected " +
            std::to_string(p.lanes) + " values for " + p.type.str() + ", got " + std::to_string(arr->size));
  std::memcpy(out, arr->data, size_t(p.element_bytes));
}

namespace {

class Packer {
 public:
  explicit Packer(Plan& p) : plan_(p) {}
  unsigned char* next(size_t bytes) {
    KJIT_CHECK(plan_.pointer_count < 1 + 2 * kMaxParams && bytes <= sizeof plan_.storage[0], "packing overflow");
    unsigned char* slot = plan_.storage[plan_.pointer_count];
    plan_.pointers[plan_.pointer_count++] = slot;
    return slot;
  }
  void array(const ParamInfo& p, const xla::Buffer* b, int batch_rank, const Plan& shape_of) {
    auto* desc = reinterpret_cast<kj::array_t<void>*>(next(sizeof(kj::array_t<void>)));
    if (!b) {  // absent (no gradient)
      std::memset(desc, 0, sizeof *desc);
      return;
    }
    write_array(desc, p, *b, batch_rank);
    batched(&desc->data, p, *b, batch_rank, shape_of);
  }
  /// A value parameter: from its attribute, or (traced) read where buffer `b` holds it.
  void value(const Where& pre, const xla::Attrs& attrs, const ParamInfo& p, const xla::Buffer* b, int batch_rank,
             const Plan& shape_of) {
    const kjit::detail::ValueSlot slot{next(kjit::detail::ValueSlot::bytes(size_t(p.element_bytes)))};
    if (!b) {
      slot.clear(size_t(p.element_bytes));
      read_static(pre, attrs, p, slot.value());
      return;
    }
    slot.point_at(b->data, size_t(p.element_bytes));
    batched(slot.pointer(), p, *b, batch_rank, shape_of);
  }
  /// A flattened struct parameter's value slot of `bytes` bytes, cleared (its value travels
  /// in it); returns where the value goes, which the fields are written into.
  unsigned char* struct_value(size_t bytes) {
    const kjit::detail::ValueSlot slot{next(kjit::detail::ValueSlot::bytes(bytes))};
    slot.clear(bytes);
    return slot.value();
  }
  /// A struct's array field: the descriptor of `b` at `at` (inside a struct_value), and, in an
  /// adjoint call, `g` as the field's gradient buffer, where the adjoint adds its gradient.
  void field_array(unsigned char* at, const ParamInfo& p, const xla::Buffer& b, int batch_rank,
                   const xla::Buffer* g, int grad_batch_rank, const Plan& shape_of) {
    auto* desc = reinterpret_cast<kj::array_t<void>*>(at);
    write_array(desc, p, b, batch_rank);
    batched(&desc->data, p, b, batch_rank, shape_of);
    if (!g) return;
    desc->grad = g->data;
    batched(&desc->grad, p, *g, grad_batch_rank, shape_of);
  }
  /// A struct's traced plain leaf: its value, read from `b` into `at` (inside a struct_value)
  /// before each batch item (Plan::copy_leaves).
  void field_value(unsigned char* at, int param, const ParamInfo& p, const xla::Buffer& b, int batch_rank,
                   const Plan& shape_of) {
    LeafCopy& c = plan_.leaf_copies[plan_.leaf_copy_count++];
    c = LeafCopy{at, b.data, size_t(p.element_bytes), param};
    batched(&c.src, p, b, batch_rank, shape_of);
  }
  /// A flattened struct's adjoint slot: null, or (some of its plain leaves traced and
  /// differentiable) where the sum of the struct's adjoint goes, each such leaf's part of it
  /// added into its gradient result `grads[leaf]` (batch rank `grad_br[leaf]`).
  void struct_adjoint(const KernelInfo& k, const PackedParam& pp, const xla::Buffer* const* grads,
                      const int* grad_br, const Plan& shape_of) {
    auto** slot = reinterpret_cast<void**>(next(sizeof(void*)));
    *slot = nullptr;
    const ir::Type& type = k.def->params()[size_t(k.params[size_t(pp.first)].kparam)].type;
    for (int fi = pp.first; fi < pp.first + pp.count; ++fi) {
      const ParamInfo& p = k.params[size_t(fi)];
      if (p.is_array || !grads[fi]) continue;
      ValueGradient& v = plan_.value_grads[plan_.value_grad_count++];
      v = ValueGradient{slot, type, p.offset, size_t(p.element_bytes), grads[fi]->data};
      batched(&v.destination, p, *grads[fi], grad_br[fi], shape_of);
    }
  }
  /// A value's adjoint slot: the destination of its gradient (a result buffer), or null.
  void value_adjoint(const ParamInfo& p, const xla::Buffer* g, int batch_rank, const Plan& shape_of) {
    auto** slot = reinterpret_cast<void**>(next(sizeof(void*)));
    *slot = g ? g->data : nullptr;
    if (!g) return;
    batched(slot, p, *g, batch_rank, shape_of);
    plan_.value_grads[plan_.value_grad_count++] = ValueGradient{slot, p.type};
  }

 private:
  /// Registers `*where` (pointing into `b`) to move with the batch item.
  void batched(void** where, const ParamInfo& p, const xla::Buffer& b, int batch_rank, const Plan& shape_of) {
    BatchedPointer& ba = plan_.batched[plan_.batched_count++];
    ba.where = where;
    ba.base = static_cast<char*>(b.data);
    // Batch strides: the buffer's leading dims, aligned to the call's trailing batch dims;
    // a missing or size-1 dim broadcasts (stride 0). element_bytes is a whole element (all
    // of a vector's or matrix's lanes), so only the array dims multiply it (none for values).
    int64_t stride = int64_t(p.element_bytes);
    for (int d = 0; d < p.ndim; ++d) stride *= b.dims[batch_rank + d];
    for (int d = 0; d < kMaxBatchRank; ++d) ba.batch_stride[d] = 0;
    for (int d = batch_rank - 1; d >= 0; --d) {
      int call_d = shape_of.batch_rank - batch_rank + d;
      ba.batch_stride[call_d] = b.dims[d] == 1 ? 0 : stride;
      stride *= b.dims[d];
    }
  }

  Plan& plan_;
};


void reset(Plan& plan, const KernelInfo& k, bool adjoint) {
  plan.kernel = &k;
  plan.adjoint = adjoint;
  plan.batched_count = plan.value_grad_count = plan.leaf_copy_count = plan.fill_count = plan.pointer_count = 0;
  plan.batch_rank = 0;
  plan.batch_count = 1;
  plan.block_dim = 0;
}

const KernelInfo& kernel_of(const xla::CallFrame* f) {
  AttrRef a = find_attr(f->attrs, kAttrKernel);
  if (!a) invalid(std::string("kjit: the call has no '") + kAttrKernel + "' attribute naming the kernel to launch");
  const KernelInfo& k = kernel_info(attr_string(a, kAttrKernel));
  if (k.params.size() > size_t(kMaxParams))
    invalid(call_prefix(k, false) + "the XLA FFI packs at most " + std::to_string(kMaxParams) + " parameters");
  // A flattened struct travels in one value slot (nesting makes large ones easy to write).
  for (const PackedParam& pp : k.packed)
    if (pp.struct_bytes && kjit::detail::ValueSlot::bytes(size_t(pp.struct_bytes)) > sizeof Plan::storage[0]) {
      const ParamInfo& first = k.params[size_t(pp.first)];
      const std::string name = first.name.substr(0, first.name.find('.'));
      invalid(call_prefix(k, false) + "struct parameter '" + name + "' (" + k.def->params()[size_t(first.kparam)].type.str() +
              ") is " + std::to_string(pp.struct_bytes) + " bytes, beyond the " +
              std::to_string(sizeof Plan::storage[0] - kjit::detail::ValueSlot::bytes(0)) +
              " bytes the XLA FFI packs for one value; pass some of its arrays as parameters of their own");
    }
  return k;
}

/// Batch dims of the call: those of the first result (XLA gives every result the full batch).
void set_batch(Plan& plan, const xla::Buffer& b, int batch_rank) {
  plan.batch_rank = batch_rank;
  plan.batch_count = 1;
  for (int d = 0; d < batch_rank; ++d) {
    plan.batch_dims[d] = b.dims[d];
    plan.batch_count *= b.dims[d];
  }
}

/// Checks an input's batch dims against the call's: equal, 1 (broadcast) or absent.
void check_input_batch(const Plan& plan, const KernelInfo& k, const ParamInfo& p, const xla::Buffer& b, int br,
                       const char* role = "array argument") {
  if (br > plan.batch_rank)
    invalid(call_prefix(k, plan.adjoint) + "Invalid dimensionality for " + role + " '" + p.name + "', expected " +
            std::to_string(p.rank()) + " dimensions, got " + std::to_string(b.rank));
  for (int d = 0; d < br; ++d) {
    int64_t want = plan.batch_dims[plan.batch_rank - br + d];
    if (b.dims[d] != want && b.dims[d] != 1)
      invalid(call_prefix(k, plan.adjoint) + role + " '" + p.name + "' has batch dims " + shape_str(b.dims, br) +
              " that do not broadcast to the call's " + shape_str(plan.batch_dims, plan.batch_rank));
  }
}

/// A result must carry exactly the call's batch dims.
void check_result_batch(const Plan& plan, const KernelInfo& k, const ParamInfo& p, const xla::Buffer& b, int br) {
  bool same = br == plan.batch_rank;
  for (int d = 0; same && d < br; ++d) same = b.dims[d] == plan.batch_dims[d];
  if (!same)
    invalid(call_prefix(k, plan.adjoint) + "result '" + p.name + "' has shape " + shape_str(b.dims, b.rank) +
            ", whose batch dims differ from the call's " + shape_str(plan.batch_dims, plan.batch_rank));
}

/// Checks traced value `t`'s buffer (operand `first + t`) and returns it and its batch rank.
const xla::Buffer* traced_buffer(const xla::CallFrame* f, const Plan& plan, const KernelInfo& k, const Layout& L,
                                 int64_t first, int t, int* br) {
  const Where pre{plan.adjoint ? "kjit adjoint of kernel '" : "kjit kernel '", &k.name};
  const ParamInfo& p = k.params[size_t(L.traced[t])];
  const xla::Buffer* b = &arg_buffer(f, first + t);
  *br = check_array(pre, p, *b, "traced argument");
  check_input_batch(plan, k, p, *b, *br, "traced argument");
  return b;
}

/// The place in the call's order of the first input array that is a parameter of its own
/// (not a struct's field): the one launch dims default to; -1 when there is none.
int first_own_input(const KernelInfo& k, const Layout& L) {
  for (int i = 0; i < L.nin; ++i)
    if (k.params[size_t(L.order[i])].field < 0) return i;
  return -1;
}

void set_bounds(const xla::CallFrame* f, Plan& plan, const KernelInfo& k, const Layout& L, const xla::Buffer* const* ins,
                const int* in_br) {
  const int first = first_own_input(k, L);
  const xla::Buffer* first_in = first >= 0 ? ins[first] : nullptr;
  const int first_br = first >= 0 ? in_br[first] : 0;
  int64_t dims[kj::kMaxDims];
  int n = 0;
  const Where pre{plan.adjoint ? "kjit adjoint of kernel '" : "kjit kernel '", &k.name};
  if (AttrRef a = find_attr(f->attrs, kAttrLaunchDims)) {
    n = attr_int_array(a, kAttrLaunchDims, dims, kj::kMaxDims);
  } else if (first_in) {
    const ParamInfo& p = k.params[size_t(L.order[first])];
    n = p.ndim;
    for (int d = 0; d < n; ++d) dims[d] = first_in->dims[first_br + d];
  } else {
    invalid(pre + "cannot derive the launch dimensions: the call has no input array; pass launch_dims");
  }
  if (n < 1 || n > kj::kMaxDims)
    invalid(pre + "launches have 1 to 4 dimensions, got " + std::to_string(n));
  if (k.launch_ndim != 0 && k.launch_ndim != n)
    invalid(pre + "the kernel uses tid<" + std::to_string(k.launch_ndim) + ">() and needs a " +
            std::to_string(k.launch_ndim) + "-D launch, got " + std::to_string(n) + "-D launch dims " +
            shape_str(dims, n));
  kj::launch_bounds_t& b = plan.bounds;
  b.ndim = n;
  b.reserved = 0;
  b.size = 1;
  for (int d = 0; d < kj::kMaxDims; ++d) b.shape[d] = 1;
  for (int d = 0; d < n; ++d) {
    if (dims[d] < 0 || dims[d] > INT32_MAX)
      invalid(pre + "launch extent " + std::to_string(dims[d]) + " of dimension " + std::to_string(d) +
              " is out of range");
    b.shape[d] = kj_int32(dims[d]);
  }
  // Checked at every step: each extent is below 2^31, so the product cannot wrap (65536^4 is 0).
  for (int d = 0; d < n; ++d) {
    b.size *= dims[d];
    if (b.size > INT32_MAX)
      invalid(pre + "launch dims " + shape_str(dims, n) +
              " give more threads than the 2^31-1 that int32 thread indices address");
  }
}

/// Non-empty launches cannot index empty arrays: kernels do not bounds-check. Arrays whose
/// elements the kernel never touches (it reads their extents only) may be empty.
void check_not_empty(const Plan& plan, const KernelInfo& k, int param, const xla::Buffer& b) {
  const ParamInfo& p = k.params[size_t(param)];
  if (!k.extents.accessed[size_t(param)]) return;
  if (plan.bounds.size > 0 && plan.batch_count > 0 && elements(b) == 0)
    invalid(call_prefix(k, plan.adjoint) + "array argument '" + p.name + "' is empty (shape " +
            shape_str(b.dims, b.rank) + ") but the launch has " + std::to_string(plan.bounds.size) +
            " threads; kernels do not bounds-check, so an empty array cannot be passed to a non-empty launch");
}

/// The buffers bound to each parameter of a call (and to its adjoint, for an adjoint call),
/// for the extent check once all are known.
struct ByParam {
  const xla::Buffer* buf[kMaxParams] = {};
  int br[kMaxParams];            ///< set with buf (left uninitialised: this is the hot path)
  const char* role[kMaxParams];  ///< likewise
  void set(int param, const xla::Buffer* b, int batch_rank, const char* r) {
    buf[param] = b;
    br[param] = batch_rank;
    role[param] = r;
  }
};

/// Refuses a launch longer than an array the kernel indexes by the thread index with no
/// guard (kjit/ir/extent_facts.hpp): it would read or write past the array.
void check_extents(const Plan& plan, const KernelInfo& k, const ByParam& by, bool launch_dims_given) {
  if (plan.bounds.size == 0 || plan.batch_count == 0) return;
  for (const ir::ExtentFact& fact : k.extents.unguarded) {
    const xla::Buffer* b = by.buf[fact.param];
    if (!b) continue;
    const ParamInfo& p = k.params[size_t(fact.param)];
    const int64_t threads = fact.launch_dim < 0 ? plan.bounds.size : plan.bounds.shape[fact.launch_dim];
    const int64_t need = fact.needed(threads);
    const int64_t have = b->dims[by.br[fact.param] + fact.dim];
    if (have >= need) continue;
    int64_t shape[kj::kMaxDims];
    for (int d = 0; d < plan.bounds.ndim; ++d) shape[d] = plan.bounds.shape[d];
    const std::string launch = shape_str(shape, plan.bounds.ndim);
    const bool output = std::string(by.role[fact.param]) == "output";
    invalid(call_prefix(k, plan.adjoint) + (output ? "output '" : std::string(by.role[fact.param]) + " '") + p.name +
            "' has extent " + std::to_string(have) + " in dimension " + std::to_string(fact.dim) +
            ", but the launch " + launch + (launch_dims_given ? " (launch_dims)" : "") + " needs at least " +
            std::to_string(need) + ": the kernel indexes '" + p.name + "' at " + fact.index_str() + " (" +
            fact.loc.short_str() + ") with no guard" +
            (output ? "; output_dims must not be smaller than the launch" : "; pass launch_dims no larger than '" +
                                                                             p.name + "'"));
  }
}

void read_block_dim(const xla::CallFrame* f, Plan& plan) {
  if (AttrRef a = find_attr(f->attrs, kAttrBlockDim)) {
    int64_t v = attr_int(a, kAttrBlockDim);
    if (v < 1 || v > 1024) invalid(call_prefix(*plan.kernel, plan.adjoint) + "block_dim must be 1..1024, got " + std::to_string(v));
    plan.block_dim = int(v);
  }
}

/// `g`, to be zeroed before the launch (a gradient or an output the launch adds into or reads).
const xla::Buffer* zeroed(Plan& plan, const xla::Buffer* g) {
  Fill& fl = plan.fills[plan.fill_count++];
  fl.dst = g->data;
  fl.src = nullptr;
  fl.bytes = size_t(elements(*g)) * size_t(dtype_bytes(g->dtype));
  return g;
}

/// Packs flattened struct parameter `pp` into one value slot, each leaf at its offset in the
/// outermost struct (a nested struct's leaves too): each array leaf the descriptor
/// of its input buffer (ins[place], batch rank in_br[place]) with, in an adjoint call, its
/// gradient result grads[field param] as the descriptor's gradient buffer; each plain field
/// read from its attribute, or, traced, from its buffer (traced[t], t counting the call's
/// traced values) before each batch item. An array field is an input the kernel reads: never
/// in/out or an output, and never written (XLA's inputs are read-only).
void pack_struct(Packer& pk, const Plan& plan, const KernelInfo& k, const PackedParam& pp, const Where& pre,
                 const xla::Attrs& attrs, const Layout& L, const xla::Buffer* const* ins, const int* in_br,
                 const xla::Buffer* const* grads, const int* grad_br, const xla::Buffer* const* traced,
                 const int* traced_br, size_t& t) {
  unsigned char* value = pk.struct_value(size_t(pp.struct_bytes));
  for (int fi = pp.first; fi < pp.first + pp.count; ++fi) {
    const ParamInfo& p = k.params[size_t(fi)];
    if (!p.is_array) {
      if (L.is_traced[fi]) {
        pk.field_value(value + p.offset, fi, p, *traced[t], traced_br[t], plan);
        ++t;
      } else {
        read_static(pre, attrs, p, value + p.offset);
      }
      continue;
    }
    const int q = L.pos[fi];
    if (q >= L.nin || L.is_in_out[fi])
      invalid(pre + "struct field '" + p.name + "' must be an input array (struct fields are never outputs or "
              "in/out arrays)");
    if (p.use.stores || p.use.accumulates || p.use.other_atomics)
      invalid(pre + "the kernel writes into struct field '" + p.name + "', which XLA owns read-only: a struct's "
              "array fields are inputs from JAX; pass the array as an output parameter of its own");
    pk.field_array(value + p.offset, p, *ins[q], in_br[q], grads ? grads[fi] : nullptr, grads ? grad_br[fi] : 0,
                   plan);
  }
}

}  // namespace

void Plan::select_batch(int64_t b) {
  int64_t idx[kMaxBatchRank] = {};
  for (int d = batch_rank - 1; d >= 0; --d) {
    idx[d] = batch_dims[d] ? b % batch_dims[d] : 0;
    b = batch_dims[d] ? b / batch_dims[d] : 0;
  }
  for (int i = 0; i < batched_count; ++i) {
    int64_t off = 0;
    for (int d = 0; d < batch_rank; ++d) off += idx[d] * batched[i].batch_stride[d];
    *batched[i].where = batched[i].base + off;
  }
}

void Plan::copy_leaves() const {
  for (int i = 0; i < leaf_copy_count; ++i) std::memcpy(leaf_copies[i].dst, leaf_copies[i].src, leaf_copies[i].bytes);
}

void plan_forward(const xla::CallFrame* f, Plan& plan) {
  const KernelInfo& k = kernel_of(f);
  reset(plan, k, false);
  const Where pre{"kjit kernel '", &k.name};
  Layout L;
  L.n_io = read_in_out(k, false, f->attrs, L.io);
  for (int i = 0; i < L.n_io; ++i) L.is_in_out[L.io[i]] = true;
  read_traced(k, false, f->attrs, L);
  read_order(k, false, f->attrs, L);
  const int A = int(k.arrays.size());
  const int64_t nrets = f->rets.size;
  const int64_t nargs = f->args.size - L.n_traced;  // array operands; the traced values follow
  L.n_pure = int(nrets) - L.n_io;
  L.nin = int(nargs);
  if (nrets < 1)
    invalid(pre + "the call has no result: a kernel call needs at least one output or in/out array");
  if (nargs < 0)
    invalid(pre + "attribute '" + kAttrTraced + "' names " + std::to_string(L.n_traced) +
            " traced values but the call passes only " + std::to_string(f->args.size) + " operands");
  if (L.n_pure < 0 || nargs + L.n_pure != A)
    invalid(pre + "the kernel has " + std::to_string(A) + " array parameters (" + k.names(k.arrays) +
            "); the call passes " + std::to_string(nargs) + " input buffers" +
            (L.n_traced ? " (besides " + std::to_string(L.n_traced) + " traced values)" : std::string()) + " and " +
            std::to_string(nrets) + " results (" + std::to_string(L.n_io) +
            " of them in/out), which does not add up: inputs + pure outputs must be " + std::to_string(A));
  for (int i = 0; i < L.n_io; ++i)
    if (L.pos[L.io[i]] >= L.nin)
      invalid(pre + "in/out parameter '" + k.params[size_t(L.io[i])].name + "' must be one of the input arrays (" +
              order_names(k, L, 0, L.nin) + ")");

  // Results first: they fix the batch dims.
  const xla::Buffer* rets[kMaxParams];
  int ret_br[kMaxParams];
  for (int64_t r = 0; r < nrets; ++r) {
    int param = r < L.n_io ? int(L.io[r]) : L.order[L.nin + (r - L.n_io)];
    rets[r] = &ret_buffer(f, r);
    ret_br[r] = check_array(pre, k.params[size_t(param)], *rets[r], "output");
    if (r == 0) set_batch(plan, *rets[0], ret_br[0]);
    else check_result_batch(plan, k, k.params[size_t(param)], *rets[r], ret_br[r]);
  }
  const xla::Buffer* ins[kMaxParams];
  int in_br[kMaxParams];
  for (int i = 0; i < L.nin; ++i) {
    const ParamInfo& p = k.params[size_t(L.order[i])];
    ins[i] = &arg_buffer(f, i);
    in_br[i] = check_array(pre, p, *ins[i], "array argument");
    check_input_batch(plan, k, p, *ins[i], in_br[i]);
  }
  // In/out results alias their inputs: same shape.
  for (int r = 0; r < L.n_io; ++r) {
    const xla::Buffer& a = *ins[L.pos[L.io[r]]];
    const xla::Buffer& b = *rets[r];
    bool same = a.rank == b.rank;
    for (int64_t d = 0; same && d < a.rank; ++d) same = a.dims[d] == b.dims[d];
    if (!same)
      invalid(pre + "in/out argument '" + k.params[size_t(L.io[r])].name + "' has input shape " +
              shape_str(a.dims, a.rank) + " but output shape " + shape_str(b.dims, b.rank));
  }
  const xla::Buffer* traced[kMaxParams];
  int traced_br[kMaxParams];
  for (int t = 0; t < L.n_traced; ++t) traced[t] = traced_buffer(f, plan, k, L, nargs, t, &traced_br[t]);
  set_bounds(f, plan, k, L, ins, in_br);
  read_block_dim(f, plan);

  Packer pk(plan);
  ByParam by;
  std::memcpy(pk.next(sizeof(kj::launch_bounds_t)), &plan.bounds, sizeof(kj::launch_bounds_t));
  size_t tr_i = 0;
  for (const PackedParam& pp : k.packed) {
    if (pp.struct_bytes) {
      pack_struct(pk, plan, k, pp, pre, f->attrs, L, ins, in_br, nullptr, nullptr, traced, traced_br, tr_i);
      continue;
    }
    const size_t pi = size_t(pp.first);
    const ParamInfo& p = k.params[pi];
    if (!p.is_array) {
      const bool t = L.is_traced[pi];
      pk.value(pre, f->attrs, p, t ? traced[tr_i] : nullptr, t ? traced_br[tr_i] : 0, plan);
      tr_i += t;
      continue;
    }
    const xla::Buffer* b;
    int br;
    const int q = L.pos[pi];  // the array's place in the call
    const bool output = q >= L.nin;
    if (!output) {
      if (L.is_in_out[pi]) {  // write through the result buffer XLA aliased to the input
        int r = 0;
        while (L.io[r] != int64_t(pi)) ++r;
        b = rets[r];
        br = ret_br[r];
      } else {
        b = ins[q];
        br = in_br[q];
      }
    } else {
      b = rets[L.n_io + (q - L.nin)];
      br = ret_br[L.n_io + (q - L.nin)];
      // Outputs the kernel accumulates into or reads start at zero (XLA leaves them undefined).
      if (p.use.accumulates || p.use.other_atomics || p.use.loads) zeroed(plan, b);
    }
    check_not_empty(plan, k, int(pi), *b);
    by.set(int(pi), b, br, output ? "output" : "array argument");
    pk.array(p, b, br, plan);
  }
  check_extents(plan, k, by, bool(find_attr(f->attrs, kAttrLaunchDims)));
}

void plan_adjoint(const xla::CallFrame* f, Plan& plan) {
  const KernelInfo& k = kernel_of(f);
  reset(plan, k, true);
  const Where pre{"kjit adjoint of kernel '", &k.name};
  if (!k.has_adjoint) invalid(pre + k.adjoint_error);
  Layout L;
  L.n_io = read_in_out(k, true, f->attrs, L.io);
  for (int i = 0; i < L.n_io; ++i) L.is_in_out[L.io[i]] = true;
  read_traced(k, true, f->attrs, L);
  read_order(k, true, f->attrs, L);
  const int A = int(k.arrays.size());
  const int64_t nargs = f->args.size - L.n_traced, nrets = f->rets.size;  // the traced values come last
  // args = nin inputs + n_pure outputs + (n_io + n_pure) cotangents, with nin + n_pure = A.
  L.n_pure = int(nargs) - A - L.n_io;
  L.nin = A - L.n_pure;
  if (L.n_pure < 0 || L.nin < 0 || L.n_io > L.nin)
    invalid(pre + "the kernel has " + std::to_string(A) + " array parameters (" + k.names(k.arrays) +
            "); an adjoint call passes the input arrays, the pure outputs and one cotangent per output (" +
            std::to_string(L.n_io) + " in/out), then the traced values (" + std::to_string(L.n_traced) + "), got " +
            std::to_string(f->args.size) + " buffers");
  // The differentiable input arrays (parameter indices): a fixed array, as the hot path
  // allocates nothing (kernel_of bounds the parameters by kMaxParams).
  int diff_inputs[kMaxParams];
  int n_diff = 0;
  int grad_of[kMaxParams];  // per differentiable input array: its gradient's result index
  for (int i = 0; i < L.nin; ++i)
    if (k.params[size_t(L.order[i])].differentiable) {
      grad_of[L.order[i]] = n_diff;
      diff_inputs[n_diff++] = L.order[i];
    }
  // Then one per differentiable traced value.
  int n_diff_arrays = n_diff;
  for (int t = 0; t < L.n_traced; ++t)
    if (k.params[size_t(L.traced[t])].differentiable) diff_inputs[n_diff++] = int(L.traced[t]);
  if (nrets != n_diff)
    invalid(pre + "expected " + std::to_string(n_diff) + " results (one gradient per differentiable "
            "input array, then per differentiable traced value: " +
            k.names(std::vector<int>(diff_inputs, diff_inputs + n_diff)) + "), got " + std::to_string(nrets));
  for (int i = 0; i < L.n_io; ++i) {
    const ParamInfo& p = k.params[size_t(L.io[i])];
    if (L.pos[L.io[i]] >= L.nin)
      invalid(pre + "in/out parameter '" + p.name + "' must be one of the input arrays");
    if (p.use.stores || p.use.other_atomics)
      invalid(pre + "in/out argument '" + p.name + "' is overwritten by the kernel (a store or a non-additive "
              "atomic); only arrays the kernel accumulates into (atomic add/sub) have a defined gradient in place. "
              "Pass it as a separate input and output instead");
  }
  for (int i = L.nin; i < A; ++i) {
    const ParamInfo& p = k.params[size_t(L.order[i])];
    if (p.use.loads && p.differentiable)
      invalid(pre + "the kernel reads its output '" + p.name + "', so its adjoint would write into the output's "
              "cotangent, which XLA owns read-only; pass '" + p.name + "' through in_out_argnames instead");
  }

  // Gradients (results) fix the batch dims; all other buffers are inputs to this call.
  const xla::Buffer* rets[kMaxParams];
  int ret_br[kMaxParams];
  for (int64_t r = 0; r < nrets; ++r) {
    rets[r] = &ret_buffer(f, r);
    ret_br[r] = check_array(pre, k.params[size_t(diff_inputs[r])], *rets[r], "gradient");
    if (r == 0) set_batch(plan, *rets[0], ret_br[0]);
    else check_result_batch(plan, k, k.params[size_t(diff_inputs[r])], *rets[r], ret_br[r]);
  }
  const xla::Buffer* bufs[3 * kMaxParams];
  int br[3 * kMaxParams];
  bool batch_from_args = nrets == 0;
  for (int64_t i = 0; i < nargs; ++i) {
    int param;
    const char* role = "array argument";
    if (i < A) {
      param = L.order[i];
    } else {
      int c = int(i - A);  // cotangent of result c of the forward call
      param = c < L.n_io ? int(L.io[c]) : L.order[L.nin + (c - L.n_io)];
      role = "cotangent";
    }
    const ParamInfo& p = k.params[size_t(param)];
    bufs[i] = &arg_buffer(f, i);
    br[i] = check_array(pre, p, *bufs[i], role);
    if (batch_from_args && i == 0) set_batch(plan, *bufs[0], br[0]);
    check_input_batch(plan, k, p, *bufs[i], br[i]);
  }
  const xla::Buffer* traced[kMaxParams];
  int traced_br[kMaxParams];
  for (int t = 0; t < L.n_traced; ++t) traced[t] = traced_buffer(f, plan, k, L, nargs, t, &traced_br[t]);
  set_bounds(f, plan, k, L, bufs, br);
  read_block_dim(f, plan);

  Packer pk(plan);
  std::memcpy(pk.next(sizeof(kj::launch_bounds_t)), &plan.bounds, sizeof(kj::launch_bounds_t));
  ByParam by;
  // The adjoint indexes each adjoint array as its primal: gradients and cotangents too, so
  // each must have its primal's array dims (batch dims may differ: they broadcast).
  auto same_dims = [&](const ParamInfo& p, const xla::Buffer& g, int gbr, const xla::Buffer& primal, int pbr,
                       const char* role) {
    bool same = true;
    for (int d = 0; d < p.rank(); ++d) same = same && g.dims[gbr + d] == primal.dims[pbr + d];
    if (!same)
      invalid(pre + role + " '" + p.name + "' has shape " + shape_str(g.dims + gbr, p.rank()) + " but '" + p.name +
              "' has " + shape_str(primal.dims + pbr, p.rank()) + ": the adjoint indexes both alike");
  };
  // A struct's differentiable array fields: their gradient results, zeroed, which the
  // adjoint reaches through the primal struct (the descriptors' gradient buffers).
  const xla::Buffer* field_grads[kMaxParams];
  int field_grad_br[kMaxParams];
  for (int i = 0; i < L.nin; ++i) {
    const int pi = L.order[i];
    const ParamInfo& p = k.params[size_t(pi)];
    if (p.field < 0 || !p.differentiable) continue;
    const int ri = grad_of[pi];
    const xla::Buffer* g = zeroed(plan, rets[ri]);
    same_dims(p, *g, ret_br[ri], *bufs[i], br[i], "gradient");
    field_grads[pi] = g;
    field_grad_br[pi] = ret_br[ri];
  }
  // Primal parameters: inputs (in/out ones hold the values before the forward call), outputs.
  size_t ti = 0;
  for (const PackedParam& pp : k.packed) {
    if (pp.struct_bytes) {
      for (int fi = pp.first; fi < pp.first + pp.count; ++fi)
        if (!k.params[size_t(fi)].differentiable) field_grads[fi] = nullptr;
      pack_struct(pk, plan, k, pp, pre, f->attrs, L, bufs, br, field_grads, field_grad_br, traced, traced_br, ti);
      continue;
    }
    const size_t pi = size_t(pp.first);
    const ParamInfo& p = k.params[pi];
    if (!p.is_array) {
      const bool t = L.is_traced[pi];
      pk.value(pre, f->attrs, p, t ? traced[ti] : nullptr, t ? traced_br[ti] : 0, plan);
      ti += t;
      continue;
    }
    const int ai = L.pos[pi];  // the array's place in the call
    check_not_empty(plan, k, int(pi), *bufs[ai]);
    by.set(int(pi), bufs[ai], br[ai], ai < L.nin ? "array argument" : "output");
    pk.array(p, bufs[ai], br[ai], plan);
  }
  check_extents(plan, k, by, bool(find_attr(f->attrs, kAttrLaunchDims)));
  ByParam adj;
  // Adjoints: gradient results for differentiable inputs (zeroed, or seeded with the in/out
  // cotangent), cotangents for outputs, nothing for integers; a traced differentiable value
  // gets its gradient result (zeroed) as its destination, a static one none.
  size_t vi = size_t(n_diff_arrays);
  for (const PackedParam& pp : k.packed) {
    const size_t pi = size_t(pp.first);
    const ParamInfo& p = k.params[pi];
    if (pp.struct_bytes) {  // its arrays' gradients are set above; its traced plain leaves' go here
      const xla::Buffer* leaf_grads[kMaxParams];
      int leaf_br[kMaxParams];
      for (int fi = pp.first; fi < pp.first + pp.count; ++fi) {
        const ParamInfo& leaf = k.params[size_t(fi)];
        leaf_grads[fi] = nullptr;
        if (leaf.is_array || !L.is_traced[fi] || !leaf.differentiable) continue;
        leaf_br[fi] = ret_br[vi];
        leaf_grads[fi] = zeroed(plan, rets[vi++]);
      }
      pk.struct_adjoint(k, pp, leaf_grads, leaf_br, plan);
      continue;
    }
    if (!p.is_array) {
      const xla::Buffer* g = L.is_traced[pi] && p.differentiable ? zeroed(plan, rets[vi++]) : nullptr;
      pk.value_adjoint(p, g, g ? ret_br[vi - 1] : 0, plan);
      continue;
    }
    const int arr = L.pos[pi];
    if (!p.differentiable) {  // integers carry no adjoint
      pk.array(p, nullptr, 0, plan);
      continue;
    }
    if (arr < L.nin) {
      const int ri = grad_of[pi];
      const xla::Buffer* g = zeroed(plan, rets[ri]);
      Fill& fl = plan.fills[plan.fill_count - 1];  // seeded with the cotangent instead, in place
      if (L.is_in_out[pi]) {
        int c = 0;
        while (L.io[c] != int64_t(pi)) ++c;
        const xla::Buffer& cot = *bufs[A + c];
        if (elements(cot) != elements(*g))
          invalid(pre + "the cotangent of in/out argument '" + p.name + "' has shape " + shape_str(cot.dims, cot.rank) +
                  " but its gradient " + shape_str(g->dims, g->rank));
        fl.src = cot.data;
      }
      same_dims(p, *g, ret_br[ri], *bufs[arr], br[arr], "gradient");
      adj.set(int(pi), g, ret_br[ri], "gradient");
      pk.array(p, g, ret_br[ri], plan);
    } else {
      int c = L.n_io + (arr - L.nin);
      same_dims(p, *bufs[A + c], br[A + c], *bufs[arr], br[arr], "cotangent");
      adj.set(int(pi), bufs[A + c], br[A + c], "cotangent");
      pk.array(p, bufs[A + c], br[A + c], plan);
    }
  }
  check_extents(plan, k, adj, bool(find_attr(f->attrs, kAttrLaunchDims)));
}

}  // namespace kjit::ffi::detail

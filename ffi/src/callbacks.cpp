// Generic C++ callbacks as XLA FFI targets (Warp's register_ffi_callback): a typed view of
// the call's buffers, attributes and execution context.
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include <nlohmann/json.hpp>

#include "callables.hpp"
#include "frame.hpp"
#include "slots.hpp"

namespace kjit::ffi {

NdArray BufferView::as_array(const ir::Type& element, const Device& device) const {
  ir::Type e = element.element();
  if (detail::dtype_of(e.scalar) != dtype)
    throw Error(ErrorKind::User, "buffer of " + dtype_name + " cannot hold " + e.str() + " elements");
  int inner = e.shape == ir::Shape::Matrix ? 2 : (e.lanes() > 1 ? 1 : 0);
  if (int(shape.size()) < inner + 1 || int(shape.size()) > inner + kj::kMaxDims)
    throw Error(ErrorKind::User, "buffer of rank " + std::to_string(shape.size()) + " cannot be an array of " + e.str());
  if (inner == 1 && shape.back() != e.lanes())
    throw Error(ErrorKind::User, "buffer's last dimension is " + std::to_string(shape.back()) + ", " + e.str() +
                                     " needs " + std::to_string(e.lanes()));
  if (inner == 2 && (shape[shape.size() - 2] != e.rows || shape.back() != e.cols))
    throw Error(ErrorKind::User, "buffer's last two dimensions do not match " + e.str());
  return NdArray::view(data, e, Shape(shape.begin(), shape.end() - inner), device);
}

namespace detail {

namespace {

BufferView view_of(const xla::Buffer& b) {
  BufferView v;
  v.data = b.data;
  v.dtype = b.dtype;
  v.dtype_name = dtype_name(b.dtype);
  v.shape.assign(b.dims, b.dims + b.rank);
  v.element_bytes = dtype_bytes(b.dtype);
  return v;
}

double read_float(xla::DataType t, const void* p) {
  switch (t) {
    case xla::kF32: { float v; std::memcpy(&v, p, 4); return v; }
    case xla::kF64: { double v; std::memcpy(&v, p, 8); return v; }
    default: return 0;
  }
}

bool is_float(xla::DataType t) { return t == xla::kF32 || t == xla::kF64; }

std::map<std::string, AttrValue> decode_attrs(const xla::Attrs& attrs, int depth);

AttrValue decode_attr(xla::AttrType type, const void* value, int depth) {
  AttrValue v;
  switch (type) {
    case xla::kAttrString:
      v.kind = AttrValue::Kind::String;
      v.str = std::string(view(static_cast<const xla::ByteSpan*>(value)));
      return v;
    case xla::kAttrScalar: {
      const auto* s = static_cast<const xla::Scalar*>(value);
      v.dtype = s->dtype;
      if (is_float(s->dtype)) {
        v.kind = AttrValue::Kind::Float;
        v.f = read_float(s->dtype, s->value);
      } else if (s->dtype == xla::kPred) {
        v.kind = AttrValue::Kind::Int;
        v.i = *static_cast<const uint8_t*>(s->value) != 0;
      } else {
        v.kind = AttrValue::Kind::Int;
        AttrRef r{xla::kAttrScalar, value};
        v.i = attr_int(r, "callback attribute");
      }
      return v;
    }
    case xla::kAttrArray: {
      const auto* a = static_cast<const xla::Array*>(value);
      v.dtype = a->dtype;
      int bytes = dtype_bytes(a->dtype);
      if (is_float(a->dtype)) {
        v.kind = AttrValue::Kind::FloatArray;
        for (size_t i = 0; i < a->size; ++i) v.floats.push_back(read_float(a->dtype, static_cast<const char*>(a->data) + i * size_t(bytes)));
      } else {
        v.kind = AttrValue::Kind::IntArray;
        v.ints.resize(a->size);
        if (a->size) attr_int_array(AttrRef{xla::kAttrArray, value}, "callback attribute", v.ints.data(), int(a->size));
      }
      return v;
    }
    case xla::kAttrDictionary:
      if (depth > 16) invalid("callback attributes nest too deeply");
      v.kind = AttrValue::Kind::Dict;
      v.dict = decode_attrs(*static_cast<const xla::Attrs*>(value), depth + 1);
      return v;
  }
  invalid("unknown attribute type " + std::to_string(int(type)));
}

std::map<std::string, AttrValue> decode_attrs(const xla::Attrs& attrs, int depth) {
  std::map<std::string, AttrValue> out;
  if (attrs.size < 0 || (attrs.size > 0 && (!attrs.types || !attrs.names || !attrs.attrs)))
    invalid("malformed attribute table");
  for (int64_t i = 0; i < attrs.size; ++i) {
    if (!attrs.attrs[i]) invalid("attribute without a value");
    out[std::string(view(attrs.names[i]))] = decode_attr(attrs.types[i], attrs.attrs[i], depth);
  }
  return out;
}

struct CallbackEntry {
  std::string name;
  mutable std::shared_mutex mutex;
  std::shared_ptr<const CallbackFn> fn;
  bool graph_compatible = true;
};

struct Table {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<CallbackEntry>> entries;
};

Table& table() {
  static Table* t = new Table;
  return *t;
}

class CallbackTarget final : public SlotTarget {
 public:
  explicit CallbackTarget(CallbackEntry* e) : entry_(e) {}
  uint32_t traits(Platform platform) const override {
    std::shared_lock<std::shared_mutex> lock(entry_->mutex);
    return platform == Platform::Cuda && entry_->graph_compatible ? uint32_t(xla::kCommandBufferCompatible) : 0u;
  }
  std::string what() const override { return "callback '" + entry_->name + "'"; }
  void execute(xla::CallFrame* frame, Platform platform) override {
    std::shared_ptr<const CallbackFn> fn;
    {
      std::shared_lock<std::shared_mutex> lock(entry_->mutex);
      fn = entry_->fn;
    }
    if (!fn) fail(xla::kNotFound, "kjit: callback '" + entry_->name + "' is no longer registered");
    CallbackContext ctx;
    ctx.frame = frame;
    ctx.platform = platform;
    ctx.stage = frame->stage;
    for (int64_t i = 0; i < frame->args.size; ++i) ctx.inputs.push_back(view_of(arg_buffer(frame, i)));
    for (int64_t i = 0; i < frame->rets.size; ++i) ctx.outputs.push_back(view_of(ret_buffer(frame, i)));
    ctx.attrs = decode_attrs(frame->attrs, 0);
    if (platform == Platform::Cuda) {
      int ordinal = device_ordinal_of(frame);
      ctx.device = Device::cuda(ordinal < 0 ? 0 : ordinal);
      ctx.stream = Stream::wrap(ctx.device, stream_of(frame));
    }
    try {
      (*fn)(ctx);
    } catch (const Error& e) {
      fail(code_for(e.kind()), "kjit callback '" + entry_->name + "': " + e.what());
    } catch (const std::exception& e) {
      fail(xla::kUnknown, "kjit callback '" + entry_->name + "': " + e.what());
    }
  }

 private:
  CallbackEntry* entry_;
};

CallbackEntry* find_entry(const std::string& name) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.entries.find(name);
  return it == t.entries.end() ? nullptr : it->second.get();
}

}  // namespace

std::string registered_json() {
  nlohmann::json j;
  j["callables"] = callable_names();
  nlohmann::json cbs = nlohmann::json::array();
  {
    Table& t = table();
    std::lock_guard<std::mutex> lock(t.mutex);
    for (auto& [name, e] : t.entries) {
      std::shared_lock<std::shared_mutex> l(e->mutex);
      if (e->fn) cbs.push_back(name);
    }
  }
  j["callbacks"] = cbs;
  return j.dump();
}

}  // namespace detail

using namespace detail;

void register_callback(const std::string& name, CallbackFn fn, bool graph_compatible) {
  if (!fn) throw Error(ErrorKind::User, "register_callback('" + name + "'): no function");
  Table& t = table();
  CallbackEntry* e;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    auto& p = t.entries[name];
    if (!p) {
      p = std::make_unique<CallbackEntry>();
      p->name = name;
    }
    e = p.get();
  }
  std::unique_lock<std::shared_mutex> lock(e->mutex);
  e->fn = std::make_shared<const CallbackFn>(std::move(fn));
  e->graph_compatible = graph_compatible;
}

bool unregister_callback(const std::string& name) {
  CallbackEntry* e = find_entry(name);
  if (!e) return false;
  std::unique_lock<std::shared_mutex> lock(e->mutex);
  bool had = e->fn != nullptr;
  e->fn.reset();
  return had;
}

xla::Handler* callback_handler(const std::string& name, Platform platform) {
  CallbackEntry* e = find_entry(name);
  if (!e) return nullptr;
  {
    std::shared_lock<std::shared_mutex> lock(e->mutex);
    if (!e->fn) return nullptr;
  }
  return slot_handler("callback\n" + name, platform, [&] { return new CallbackTarget(e); });
}

}  // namespace kjit::ffi

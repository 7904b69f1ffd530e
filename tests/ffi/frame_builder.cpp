// The fake XLA api and the call-frame builder of the handler tests.
#include "frame_builder.hpp"

namespace kjit::test {

namespace {

xla::Error* create_error(xla::ErrorCreateArgs* args) {
  auto* e = new FakeError{args->errc, args->message ? args->message : ""};
  return reinterpret_cast<xla::Error*>(e);
}

void get_message(xla::ErrorGetMessageArgs* args) {
  args->message = reinterpret_cast<FakeError*>(args->error)->message.c_str();
}

void destroy_error(xla::ErrorDestroyArgs* args) { delete reinterpret_cast<FakeError*>(args->error); }

thread_local void* t_stream = nullptr;
thread_local int t_ordinal = 0;

xla::Error* get_stream(xla::StreamGetArgs* args) {
  args->stream = t_stream;
  return nullptr;
}

xla::Error* get_ordinal(xla::DeviceOrdinalGetArgs* args) {
  args->device_ordinal = t_ordinal;
  return nullptr;
}

}  // namespace

void set_execution_context(void* stream, int ordinal) {
  t_stream = stream;
  t_ordinal = ordinal;
}

const xla::Api* fake_api() {
  static xla::Api api = [] {
    xla::Api a{};
    a.struct_size = sizeof(xla::Api);
    a.api_version.struct_size = sizeof(xla::ApiVersion);
    a.api_version.major_version = 0;
    a.api_version.minor_version = 1;
    a.Error_Create = &create_error;
    a.Error_GetMessage = &get_message;
    a.Error_Destroy = &destroy_error;
    a.Stream_Get = &get_stream;
    a.DeviceOrdinal_Get = &get_ordinal;
    return a;
  }();
  return &api;
}

Outcome call(xla::Handler* handler, xla::CallFrame* frame) {
  Outcome o;
  xla::Error* e = handler(frame);
  if (!e) return o;
  auto* fe = reinterpret_cast<FakeError*>(e);
  o.ok = false;
  o.code = fe->code;
  o.message = fe->message;
  delete fe;
  return o;
}

FrameBuilder::FrameBuilder() {
  frame_.struct_size = sizeof(xla::CallFrame);
  frame_.api = fake_api();
  frame_.stage = xla::kExecute;
}

FrameBuilder& FrameBuilder::arg(xla::DataType dtype, std::vector<int64_t> dims, void* data) {
  auto& d = dims_.emplace_back(std::move(dims));
  auto& b = buffers_.emplace_back(xla::Buffer{sizeof(xla::Buffer), nullptr, dtype, data, int64_t(d.size()), d.data()});
  args_.push_back(&b);
  arg_types_.push_back(xla::kArgBuffer);
  return *this;
}

FrameBuilder& FrameBuilder::ret(xla::DataType dtype, std::vector<int64_t> dims, void* data) {
  auto& d = dims_.emplace_back(std::move(dims));
  auto& b = buffers_.emplace_back(xla::Buffer{sizeof(xla::Buffer), nullptr, dtype, data, int64_t(d.size()), d.data()});
  rets_.push_back(&b);
  ret_types_.push_back(xla::kRetBuffer);
  return *this;
}

FrameBuilder& FrameBuilder::attr_string(const std::string& name, const std::string& value) {
  auto& v = names_.emplace_back(value);
  auto& span = spans_.emplace_back(xla::ByteSpan{v.data(), v.size()});
  return add_attr(name, xla::kAttrString, &span);
}

FrameBuilder& FrameBuilder::add_attr(const std::string& name, xla::AttrType type, void* value) {
  auto& n = names_.emplace_back(name);
  auto& span = spans_.emplace_back(xla::ByteSpan{n.data(), n.size()});
  name_ptrs_.push_back(&span);
  attr_types_.push_back(type);
  attrs_.push_back(value);
  return *this;
}

std::vector<char>& FrameBuilder::keep_bytes(const void* p, size_t n) {
  auto& b = bytes_.emplace_back(n ? n : 1);
  if (n) std::memcpy(b.data(), p, n);
  return b;
}

xla::CallFrame* FrameBuilder::frame() {
  frame_.args = xla::Args{sizeof(xla::Args), nullptr, int64_t(args_.size()), arg_types_.data(), args_.data()};
  frame_.rets = xla::Rets{sizeof(xla::Rets), nullptr, int64_t(rets_.size()), ret_types_.data(), rets_.data()};
  frame_.attrs = xla::Attrs{sizeof(xla::Attrs), nullptr, int64_t(attrs_.size()), attr_types_.data(), name_ptrs_.data(),
                            attrs_.data()};
  return &frame_;
}

}  // namespace kjit::test

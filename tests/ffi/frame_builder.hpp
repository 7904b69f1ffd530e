// Hand-built XLA FFI call frames for the handler tests: a fake XLA api whose errors record
// their code and message, and a builder for arguments, results and typed attributes.
#pragma once

#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "kjit/ffi.hpp"

namespace kjit::test {

/// An error made by the fake api.
struct FakeError {
  xla::ErrorCode code;
  std::string message;
};

/// The fake XLA api: Error_Create allocates a FakeError; Stream_Get and DeviceOrdinal_Get
/// report what set_execution_context set on the calling thread.
const xla::Api* fake_api();
/// What the fake api reports as XLA's stream and device ordinal to calls on this thread
/// (initially nullptr and 0), as XLA's executor threads each have their own.
void set_execution_context(void* stream, int ordinal);
/// The FakeError behind an error pointer made by fake_api() (and frees it on reset).
struct Outcome {
  bool ok = true;
  xla::ErrorCode code = xla::kOk;
  std::string message;
};
/// Calls `handler` on `frame` and turns its result into an Outcome (freeing the error).
Outcome call(xla::Handler* handler, xla::CallFrame* frame);

/// Builds one call frame. Everything it points to lives in the builder.
class FrameBuilder {
 public:
  FrameBuilder();
  /// Adds an argument buffer (data may be null for a malformed frame).
  FrameBuilder& arg(xla::DataType dtype, std::vector<int64_t> dims, void* data);
  /// Adds a result buffer.
  FrameBuilder& ret(xla::DataType dtype, std::vector<int64_t> dims, void* data);
  FrameBuilder& attr_string(const std::string& name, const std::string& value);
  template <class T>
  FrameBuilder& attr_scalar(const std::string& name, xla::DataType dtype, T value) {
    auto& bytes = keep_bytes(&value, sizeof value);
    auto& s = scalars_.emplace_back(xla::Scalar{dtype, bytes.data()});
    return add_attr(name, xla::kAttrScalar, &s);
  }
  template <class T>
  FrameBuilder& attr_array(const std::string& name, xla::DataType dtype, std::vector<T> values) {
    auto& bytes = keep_bytes(values.data(), values.size() * sizeof(T));
    auto& a = arrays_.emplace_back(xla::Array{dtype, values.size(), bytes.data()});
    return add_attr(name, xla::kAttrArray, &a);
  }
  /// Adds an attribute with a raw type and value pointer (for malformed frames).
  FrameBuilder& add_attr(const std::string& name, xla::AttrType type, void* value);
  FrameBuilder& stage(xla::ExecutionStage s) {
    frame_.stage = s;
    return *this;
  }
  /// The frame (pointers refreshed).
  xla::CallFrame* frame();

 private:
  std::vector<char>& keep_bytes(const void* p, size_t n);
  xla::CallFrame frame_{};
  std::deque<std::vector<int64_t>> dims_;
  std::deque<xla::Buffer> buffers_;
  std::vector<void*> args_, rets_, attrs_;
  std::vector<xla::ArgType> arg_types_;
  std::vector<xla::RetType> ret_types_;
  std::vector<xla::AttrType> attr_types_;
  std::deque<std::string> names_;
  std::deque<xla::ByteSpan> spans_;
  std::vector<xla::ByteSpan*> name_ptrs_;
  std::deque<std::vector<char>> bytes_;
  std::deque<xla::Scalar> scalars_;
  std::deque<xla::Array> arrays_;
};

}  // namespace kjit::test

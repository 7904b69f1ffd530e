// Error kinds and the kjit exception type.
#include "kjit/error.hpp"

#include <cstring>
#include <new>

#include "kjit/ref_count.hpp"

namespace kjit {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::User: return "user";
    case ErrorKind::Compile: return "compile";
    case ErrorKind::Driver: return "driver";
    case ErrorKind::Cache: return "cache";
    case ErrorKind::Internal: return "internal";
  }
  return "unknown";
}

// One allocation holds the count and the text; copies (exceptions are copied when thrown and
// caught by value) only count.
struct Error::Message {
  long count = 1;

  /// The text, just past the header in the same allocation.
  char* text() { return reinterpret_cast<char*>(this + 1); }

  static Message* make(const char* text, size_t length) {
    Message* m = new (::operator new(sizeof(Message) + length + 1)) Message;
    std::memcpy(m->text(), text, length);
    m->text()[length] = '\0';
    return m;
  }
  void retain() { detail::ref_retain(count); }
  void release() {
    if (detail::ref_release(count)) {
      this->~Message();
      ::operator delete(this);
    }
  }
};

Error::Error(ErrorKind kind, const char* message)
    : Error(kind, message ? message : "", message ? std::strlen(message) : 0) {}

Error::Error(ErrorKind kind, const char* message, size_t length)
    : kind_(kind), message_(Message::make(message, length)) {}

Error::Error(const Error& o) noexcept : std::exception(o), kind_(o.kind_), message_(o.message_) {
  message_->retain();
}

Error& Error::operator=(const Error& o) noexcept {
  o.message_->retain();
  message_->release();
  message_ = o.message_;
  kind_ = o.kind_;
  return *this;
}

Error::~Error() { message_->release(); }

const char* Error::what() const noexcept { return message_->text(); }

}  // namespace kjit

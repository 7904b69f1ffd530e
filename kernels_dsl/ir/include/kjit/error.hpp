// kjit/error.hpp — the one exception type kjit throws, with a kind that says whose fault it is.
#pragma once

#include <cstddef>
#include <exception>

#include "kjit/string_fwd.hpp"

namespace kjit {

/// Who is to blame for an error, and so what the caller can do about it.
enum class ErrorKind {
  User,      ///< a mistake in a kernel or a launch: wrong types, counts, shapes
  Compile,   ///< NVRTC or the host compiler rejected generated code
  Driver,    ///< the CUDA driver or NVRTC is missing, too old, or failed a call
  Cache,     ///< the on-disk cache could not be used (degrades where it can)
  Internal,  ///< a kjit invariant does not hold: a bug in kjit
};

/// Name of an error kind ("user", "compile", ...).
const char* to_string(ErrorKind kind);

/// The exception every kjit API throws. `what()` is a complete, human-readable message.
/// (A std::exception holding its message itself, so that programs including <kjit/kjit.hpp>
/// do not pay for <stdexcept> and <string>; copies share the message and never throw.)
class Error : public std::exception {
 public:
  Error(ErrorKind kind, const char* message);
  Error(ErrorKind kind, const char* message, size_t length);
  /// From any string type with data() and size() (std::string, std::string_view).
  template <class S, class = detail::if_string_like<S>>
  Error(ErrorKind kind, const S& message) : Error(kind, message.data(), message.size()) {}
  Error(const Error& o) noexcept;
  Error& operator=(const Error& o) noexcept;
  ~Error() override;

  const char* what() const noexcept override;
  /// Whose fault the error is.
  ErrorKind kind() const noexcept { return kind_; }

 private:
  struct Message;
  ErrorKind kind_;
  Message* message_;  ///< shared by copies, counted
};

/// Throws an Internal error with `message` when `condition` is false. Internal invariants
/// fail loudly; they are never skipped. (Where it is used, <string> must be included.)
#define KJIT_CHECK(condition, message)                                                   \
  do {                                                                                   \
    if (!(condition))                                                                    \
      throw ::kjit::Error(::kjit::ErrorKind::Internal,                                   \
                          std::string("internal error: ") + (message) + " [" #condition  \
                              "] at " __FILE__ ":" + std::to_string(__LINE__));          \
  } while (0)

}  // namespace kjit

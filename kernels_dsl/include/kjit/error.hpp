// kjit/error.hpp — the one exception type kjit throws, with a kind that says whose fault it is.
#pragma once

#include <stdexcept>
#include <string>

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
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message);
  /// Whose fault the error is.
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

/// Throws an Internal error with `message` when `condition` is false. Internal invariants
/// fail loudly; they are never skipped.
#define KJIT_CHECK(condition, message)                                                   \
  do {                                                                                   \
    if (!(condition))                                                                    \
      throw ::kjit::Error(::kjit::ErrorKind::Internal,                                   \
                          std::string("internal error: ") + (message) + " [" #condition  \
                              "] at " __FILE__ ":" + std::to_string(__LINE__));          \
  } while (0)

}  // namespace kjit

// Error kinds and the kjit exception type.
#include "kjit/error.hpp"

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

Error::Error(ErrorKind kind, const std::string& message)
    : std::runtime_error(message), kind_(kind) {}

}  // namespace kjit

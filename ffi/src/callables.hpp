// Internal interface of the callable and callback registries (see kjit/ffi/ffi.hpp).
#pragma once

#include <string>
#include <vector>

#include "kjit/ffi/ffi.hpp"

namespace kjit::ffi::detail {

/// "none" / "xla" / "kjit" / "kjit_staged_ex" / "kjit_staged" to a GraphMode; a User error otherwise.
GraphMode parse_graph_mode(const std::string& s);
/// The signature JSON of callable `name` (as kernels', plus "graph_mode" and "graph_cache_max").
std::string callable_signature(const std::string& name);
/// Names of the registered callables, sorted.
std::vector<std::string> callable_names();
/// {"callables": [...], "callbacks": [...]}.
std::string registered_json();

}  // namespace kjit::ffi::detail

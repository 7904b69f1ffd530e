// kjit/string_fwd.hpp — declares std::string for public headers whose functions take or return
// one: the definitions and their callers see <string>, the headers only need the declaration,
// which <iosfwd> gives in libstdc++ and libc++ at a fraction of <string>'s size.
#pragma once

#include <cstddef>  // defines the standard library's own macros, tested next

#if defined(__GLIBCXX__) || defined(_LIBCPP_VERSION)
#include <iosfwd>
#else
#include <string>
#endif

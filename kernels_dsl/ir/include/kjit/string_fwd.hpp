// kjit/string_fwd.hpp — strings in light public headers: the declaration of std::string for
// functions that take or return one (the definitions and their callers see <string>, the
// headers only need the declaration, which <iosfwd> gives in libstdc++ and libc++ at a fraction
// of <string>'s size), and a test for string types that overloads taking them can use.
#pragma once

#include <cstddef>  // defines the standard library's own macros, tested next

#if defined(__GLIBCXX__) || defined(_LIBCPP_VERSION)
#include <iosfwd>
#else
#include <string>
#endif
#include <utility>

namespace kjit::detail {

/// Well-formed for string types with data() and size() (std::string, std::string_view): the
/// SFINAE condition of the overloads that take them without <string>.
template <class S>
using if_string_like = decltype(std::declval<const S&>().data() + std::declval<const S&>().size());

}  // namespace kjit::detail

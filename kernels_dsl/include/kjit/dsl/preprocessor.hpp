// kjit/dsl/preprocessor.hpp — the preprocessor helpers the DSL's generated declarations share
// (user structs' field lists, the builtin families math.hpp generates from builtins.def).
#pragma once

/// a##b after expanding both.
#define KJIT_PP_CAT(a, b) KJIT_PP_CAT_(a, b)
#define KJIT_PP_CAT_(a, b) a##b

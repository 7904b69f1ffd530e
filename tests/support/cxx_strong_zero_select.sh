#!/bin/sh
# A host compiler for KJIT_CXX that compiles modules with CUDA's strong zero (selects instead of
# branches, codegen/prelude/core.h), so the cpu device runs the variant only GPUs otherwise see.
# Its --version differs from the compiler's, so its modules have keys of their own.
cxx="${KJIT_SZ_CXX:-c++}"
if [ "$1" = "--version" ]; then
  echo "$("$cxx" --version | head -n 1) with -DKJ_STRONG_ZERO_SELECT"
  exit 0
fi
exec "$cxx" -DKJ_STRONG_ZERO_SELECT=1 "$@"

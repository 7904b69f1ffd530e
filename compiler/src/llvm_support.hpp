// The LLVM libSupport headers the compiler layer uses, declared with hidden visibility.
//
// libkjit.so links LLVMSupport statically and hides its symbols so that it loads beside
// another LLVM (jaxlib has one). Templates from LLVM headers instantiated in our own objects
// (ThreadPool::asyncImpl, std::vector<StringRef>, ...) would otherwise be exported as weak
// symbols and could bind to the other LLVM's incompatible copies at load time.
//
// Every system header those LLVM headers include is included first, outside the hidden
// region: a libc declaration made hidden (e.g. __libc_single_threaded) cannot be linked.
// A header missing from this list shows up as an undefined hidden symbol when linking.
#pragma once

#include <inttypes.h>
#include <sys/types.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <ciso646>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <future>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <queue>
#include <stack>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>

#pragma GCC visibility push(hidden)
#include <llvm/ADT/Optional.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/ThreadPool.h>
#include <llvm/Support/Threading.h>
#pragma GCC visibility pop

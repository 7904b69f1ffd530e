// kjit/ref_count.hpp — the atomic count behind kjit's shared handles (kjit::Error's message,
// the runtime's SharedResource): GCC's and Clang's atomic builtins, so headers need no <atomic>.
#pragma once

namespace kjit::detail {

/// Adds a share.
inline void ref_retain(long& count) noexcept { __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED); }
/// Drops a share; true when it was the last. acq_rel: whoever frees the shared object must
/// see every other owner's writes to it.
inline bool ref_release(long& count) noexcept { return __atomic_fetch_sub(&count, 1, __ATOMIC_ACQ_REL) == 1; }
/// The current number of shares (for tests).
inline long ref_count(const long& count) noexcept { return __atomic_load_n(&count, __ATOMIC_RELAXED); }

}  // namespace kjit::detail

// Which watched array memory has been written since a tape recorded a read of it: the
// tape's "argument overwritten after it was recorded" check (internal).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "memory_footprint.hpp"

namespace kjit::detail {

/// What a tape remembers of one read: where the memory starts (its entry's key), which entry
/// (an array released and allocated again, or read again after its entry went, is a new one),
/// and the write stamp it had.
struct WatchedRead {
  const void* data = nullptr;
  uint64_t life = 0;
  uint64_t stamp = 0;
};

/// How a watched read stands now.
enum class ReadState { Unchanged, Written, Released };

/// Starts watching the elements of `read` (or adds a watcher) and returns its entry and
/// stamp; an empty read for an array without elements.
WatchedRead watch(const MemoryFootprint& read);
/// Drops one watcher of `read` (the entry goes with its last watcher); nothing for an empty
/// read.
void unwatch(const WatchedRead& read);
/// Whether `read` still sees the memory as it was; when written, `writer` gets who wrote it.
ReadState read_state(const WatchedRead& read, std::string* writer);

/// Whether any memory is watched: writers skip the bookkeeping below when none is.
bool any_watched() noexcept;
/// Says who wrote, for the report; called only when the written memory is watched.
using DescribeWrite = std::string (*)(const void* context);
/// Records a write of `written`'s elements: a stamp, and `describe(context)` as the writer,
/// on every watched read sharing a byte with them (another view of the memory too).
void note_watched_write(const MemoryFootprint& written, DescribeWrite describe, const void* context);
inline void note_write(const NdArray& written, DescribeWrite describe, const void* context = nullptr) {
  if (any_watched()) note_watched_write(footprint_of(written), describe, context);
}
/// Records that the `bytes` at `data` were freed: reads of them are released.
void note_release(const void* data, size_t bytes) noexcept;

}  // namespace kjit::detail

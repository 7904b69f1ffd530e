// Which watched array memory has been written since a tape recorded a read of it: the
// tape's "argument overwritten after it was recorded" check (internal).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace kjit::detail {

/// What a tape remembers of one read: the memory, which life of that address it was (an
/// address freed and allocated again is a new life), and the write stamp it had.
struct WatchedRead {
  const void* data = nullptr;
  uint64_t life = 0;
  uint64_t stamp = 0;
};

/// How a watched read stands now.
enum class ReadState { Unchanged, Written, Released };

/// Starts watching `data` (or adds a watcher) and returns its current life and stamp.
WatchedRead watch(const void* data);
/// Drops one watcher of `read` (the entry goes with its last watcher); nothing for an empty
/// read.
void unwatch(const WatchedRead& read);
/// Whether `read` still sees the memory as it was; when written, `writer` gets who wrote it.
ReadState read_state(const WatchedRead& read, std::string* writer);

/// Whether any memory is watched: writers skip the bookkeeping below when none is.
bool any_watched() noexcept;
/// Says who wrote, for the report; called only when the written memory is watched.
using DescribeWrite = std::string (*)(const void* context);
/// Records a write of `data` (a stamp, and `describe(context)` as its writer) when it is
/// watched.
void note_watched_write(const void* data, DescribeWrite describe, const void* context);
inline void note_write(const void* data, DescribeWrite describe, const void* context = nullptr) {
  if (any_watched()) note_watched_write(data, describe, context);
}
/// Records that the memory at `data` was freed.
void note_release(const void* data) noexcept;

}  // namespace kjit::detail

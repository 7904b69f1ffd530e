// Distinct XLA handler functions for targets registered at run time (callables, callbacks):
// XLA passes a handler no user data, so each target gets its own trampoline slot.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kjit/ffi/ffi.hpp"

namespace kjit::ffi::detail {

/// What a slot's trampoline calls. Lives as long as the process (slots are never reused for
/// another target; re-registering a name reuses its slot).
class SlotTarget {
 public:
  virtual ~SlotTarget() = default;
  /// Traits reported to XLA's metadata probe.
  virtual uint32_t traits(Platform platform) const = 0;
  /// Runs an EXECUTE call; may throw (the trampoline turns exceptions into XLA errors).
  virtual void execute(xla::CallFrame* frame, Platform platform) = 0;
  /// For messages: "callable 'demo::step'".
  virtual std::string what() const = 0;
};

/// Number of slots per platform.
constexpr int kSlotCount = 128;

/// The handler of the slot bound to `key` (a unique string naming target and options) on
/// `platform`, binding a new slot to `make()` on first use; nullptr when all slots are taken.
xla::Handler* slot_handler(const std::string& key, Platform platform,
                           const std::function<SlotTarget*()>& make);

}  // namespace kjit::ffi::detail

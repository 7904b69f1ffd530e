// Trampoline slots: kSlotCount distinct handler functions per platform, each forwarding to
// the target bound to it.
#include "slots.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

#include "frame.hpp"

namespace kjit::ffi::detail {

namespace {

std::atomic<SlotTarget*> g_targets[kSlotCount];

template <int S, Platform P>
xla::Error* trampoline(xla::CallFrame* frame) {
  SlotTarget* t = g_targets[S].load(std::memory_order_acquire);
  if (!t) {
    if (frame && frame->api) return make_error(frame->api, xla::kInternal, "kjit: unbound FFI handler slot");
    return nullptr;
  }
  std::string what;
  return guarded(frame, t->traits(P), "kjit", [&] { t->execute(frame, P); });
}

template <Platform P, int... S>
constexpr std::array<xla::Handler*, sizeof...(S)> table(std::integer_sequence<int, S...>) {
  return {&trampoline<S, P>...};
}

const auto kCpu = table<Platform::Cpu>(std::make_integer_sequence<int, kSlotCount>());
const auto kCuda = table<Platform::Cuda>(std::make_integer_sequence<int, kSlotCount>());

struct Registry {
  std::mutex mutex;
  std::map<std::string, int> slot_of;
  int used = 0;
};

Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

}  // namespace

xla::Handler* slot_handler(const std::string& key, Platform platform, const std::function<SlotTarget*()>& make) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.slot_of.find(key);
  int slot;
  if (it != r.slot_of.end()) {
    slot = it->second;
  } else {
    if (r.used == kSlotCount) return nullptr;
    slot = r.used++;
    g_targets[slot].store(make(), std::memory_order_release);
    r.slot_of[key] = slot;
  }
  return platform == Platform::Cuda ? kCuda[size_t(slot)] : kCpu[size_t(slot)];
}

}  // namespace kjit::ffi::detail

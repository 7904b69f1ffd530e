// Device lookup and primary contexts: retained once per device, made current around each call.
#include "cuda/driver_api.hpp"
#include "kjit/error.hpp"

namespace kjit::cuda {

DeviceState& device(int ordinal) {
  Driver& d = driver();
  if (!d.reason.empty())
    throw Error(ErrorKind::Driver,
                "cuda:" + std::to_string(ordinal) + " is not available: " + d.reason);
  if (ordinal < 0 || ordinal >= int(d.devices.size()))
    throw Error(ErrorKind::Driver,
                "cuda:" + std::to_string(ordinal) + " is out of range: the CUDA driver reports " +
                    std::to_string(d.devices.size()) +
                    (d.devices.size() == 1 ? " device (cuda:0)"
                                           : " devices (cuda:0 to cuda:" +
                                                 std::to_string(d.devices.size() - 1) + ")"));
  return *d.devices[size_t(ordinal)];
}

CUcontext primary_context(DeviceState& dev) {
  if (CUcontext ctx = dev.context.load(std::memory_order_acquire)) return ctx;
  // The primary context is the one the CUDA runtime, XLA and other libraries share, so kjit's
  // arrays and modules are usable by them and theirs by kjit.
  std::call_once(dev.context_once, [&] {
    CUcontext ctx = nullptr;
    KJIT_CU(driver().api.cuDevicePrimaryCtxRetain(&ctx, dev.handle));
    dev.context.store(ctx, std::memory_order_release);
  });
  return dev.context.load(std::memory_order_acquire);
}

ContextScope::ContextScope(DeviceState& dev) {
  CUcontext ctx = primary_context(dev);
  const DriverApi& a = driver().api;
  CUcontext current = nullptr;
  KJIT_CU(a.cuCtxGetCurrent(&current));
  if (current != ctx) {
    KJIT_CU(a.cuCtxPushCurrent(ctx));
    pushed_ = true;
  }
}

ContextScope::~ContextScope() {
  if (pushed_) {
    CUcontext popped = nullptr;
    driver().api.cuCtxPopCurrent(&popped);
  }
}

}  // namespace kjit::cuda

// Array arguments of one launch that share memory, and flagged descriptor copies (shared_arrays.hpp).
#include "kjit/runtime/internal/shared_arrays.hpp"

#include <atomic>
#include <utility>

#include "kjit/error.hpp"

namespace kjit::detail {

namespace {
std::atomic<uint64_t> g_shared_own_adds{0};

/// The bytes array `a` spans: [first, last] (any stride signs).
std::pair<const char*, const char*> span_of(const kj::array_t<void>& a) {
  const char* lo = static_cast<const char*>(a.data);
  const char* hi = lo;
  for (int d = 0; d < a.ndim; ++d) {
    if (a.shape[d] == 0) return {nullptr, nullptr};
    const int64_t reach = int64_t(a.shape[d] - 1) * a.strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi + 1};  // + 1: at least the first byte of the last element
}
}  // namespace

bool shares_memory(const std::vector<int>& array_args, void** params, int target) {
  const auto mine = span_of(*static_cast<const kj::array_t<void>*>(params[target]));
  if (!mine.first) return false;
  for (int arg : array_args) {
    if (arg == target) continue;
    const auto other = span_of(*static_cast<const kj::array_t<void>*>(params[arg]));
    if (other.first && other.first < mine.second && mine.first < other.second) return true;
  }
  return false;
}

void FlaggedArrays::flag(int arg, kj_int32 flag) {
  if (flagged_params_.empty()) {
    flagged_params_.assign(params_, params_ + count_);
    flagged_.reserve(most_);  // not resized again: params point into it
  }
  KJIT_CHECK(flagged_.size() < most_, "more flagged arrays than a launch has");
  flagged_.push_back(*static_cast<const kj::array_t<void>*>(params_[arg]));
  flagged_.back().flags |= flag;
  flagged_params_[size_t(arg)] = &flagged_.back();
}

bool OwnAdds::shared(void** params, int target) const {
  return static_cast<const kj::array_t<void>*>(params[target])->data && shares_memory(array_args, params, target);
}

bool OwnAdds::shared(void** params) const {
  for (int t : targets)
    if (shared(params, t)) {
      g_shared_own_adds.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
  return false;
}

OwnAdds own_adds_of(const compiler::KernelDescription& k) {
  OwnAdds out;
  if (k.adjoint.empty()) return out;
  const int n = int(k.params.size());
  out.param_count = 1 + 2 * n;
  for (int p : k.own_adds) out.targets.push_back(1 + p);
  if (out.targets.empty()) return out;
  for (int copy = 0; copy < 2; ++copy)
    for (int p = 0; p < n; ++p)
      if (k.params[size_t(p)].ndim > 0) out.array_args.push_back(1 + copy * n + p);
  return out;
}

uint64_t shared_own_add_launches() { return g_shared_own_adds.load(std::memory_order_relaxed); }

}  // namespace kjit::detail

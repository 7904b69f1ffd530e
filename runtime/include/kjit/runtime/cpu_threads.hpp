// kjit/runtime/cpu_threads.hpp — which threads run the cpu device's pooled work: kjit's own
// pool, or the thread team of an OpenMP runtime the process already runs (PyTorch's).
#pragma once

#include <string>

namespace kjit {

/// Runs the cpu device's pooled work (launches, BVH and hash-grid builds) on the thread team of
/// the OpenMP runtime `openmp_library`, a GCC libgomp already loaded in this process (PyTorch's
/// torch/lib/libgomp.so.1), with as many threads as kjit's pool (KJIT_NUM_THREADS, else the
/// hardware threads); kjit's own workers then sleep. Why: an idle OpenMP team polls for its
/// next region (libgomp's default wait policy), as kjit's workers poll for their next launch,
/// so two thread sets in one process take turns on the same cores and a launch after a torch
/// op runs on one thread. kjit.torch calls this when torch runs on libgomp. Results and
/// rounding are those of kjit's pool (the same chunks, each thread's number as its slot).
/// Throws kjit::Error (User), changing nothing, when the library is not loaded in this process
/// or is not a libgomp.
void share_cpu_threads(const std::string& openmp_library);

/// Runs the cpu device's pooled work on kjit's own pool again (the default).
void use_own_cpu_threads();

/// What runs the cpu device's pooled work: "kjit" (its own pool) or the OpenMP library's path.
std::string cpu_threads();

}  // namespace kjit

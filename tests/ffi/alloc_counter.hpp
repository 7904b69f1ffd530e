// Counts the calling thread's allocations (operator new is replaced in the test_ffi binary).
#pragma once

namespace kjit::test {

/// Starts counting this thread's calls of operator new from zero.
void start_counting_allocations();
/// Stops counting; returns the allocations since start_counting_allocations().
long stop_counting_allocations();

}  // namespace kjit::test

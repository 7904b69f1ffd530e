// The replaced global operator new of the test_ffi binary, counting per thread while asked to.
// In a file of its own so that no inlined container pairs it with the replaced delete.
#include "alloc_counter.hpp"

#include <cstdlib>
#include <new>

namespace {
thread_local bool t_counting = false;
thread_local long t_allocations = 0;
}  // namespace

void* operator new(std::size_t n) {
  if (t_counting) ++t_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace kjit::test {

void start_counting_allocations() {
  t_allocations = 0;
  t_counting = true;
}

long stop_counting_allocations() {
  t_counting = false;
  return t_allocations;
}

}  // namespace kjit::test

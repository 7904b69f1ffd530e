// The replaced global operator new of the test_ffi binary, counting per thread while asked to.
// In a file of its own so that no inlined container pairs it with the replaced delete.
#include "alloc_counter.hpp"

#include <cstddef>
#include <cstdlib>
#include <new>

namespace {
thread_local bool t_counting = false;
thread_local long t_allocations = 0;
}  // namespace

// Every form of new allocates with malloc and every form of delete frees with free: replacing
// only some of them pairs this malloc with the sanitizer's operator delete[] (an
// alloc-dealloc mismatch under AddressSanitizer).
namespace {
void* counted(std::size_t n, std::size_t align = 0) {
  if (t_counting) ++t_allocations;
  if (n == 0) n = 1;
  if (align > alignof(std::max_align_t)) return std::aligned_alloc(align, (n + align - 1) / align * align);
  return std::malloc(n);
}
void* or_throw(void* p) {
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) { return or_throw(counted(n)); }
void* operator new[](std::size_t n) { return or_throw(counted(n)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted(n); }
void* operator new(std::size_t n, std::align_val_t a) { return or_throw(counted(n, std::size_t(a))); }
void* operator new[](std::size_t n, std::align_val_t a) { return or_throw(counted(n, std::size_t(a))); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted(n, std::size_t(a)); }
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted(n, std::size_t(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

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

// GuardedBuffer: an anonymous mapping whose last page is PROT_NONE, the buffer placed just before it.
#include "guarded_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <stdexcept>

namespace kjit::test {

GuardedBuffer::GuardedBuffer(size_t bytes) : bytes_(bytes) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  map_bytes_ = (bytes + page - 1) / page * page + page;
  void* p = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("GuardedBuffer: mmap failed");
  base_ = static_cast<char*>(p);
  if (mprotect(base_ + map_bytes_ - page, page, PROT_NONE) != 0) throw std::runtime_error("GuardedBuffer: mprotect failed");
  data_ = base_ + map_bytes_ - page - bytes;
}

GuardedBuffer::~GuardedBuffer() { munmap(base_, map_bytes_); }

}  // namespace kjit::test

// examples/warp/work_queue.cpp — Warp 1.19's warp/examples/core/example_work_queue.py in kjit: a
// lock-free ring buffer in a struct of arrays that 1024 threads drain, each item under a million
// enqueued again plus a million, until it is empty (device functions that return from inside
// their loops, a tuple result, atomic_cas). Prints every item processed, as Warp's, writes
// head, tail and buffer (int32) to --out and prints the milliseconds per launch.
// Warp's example gives the buffer 4096 slots for a capacity of 8192, so its second half of the
// items goes past the buffer's end; this port allocates the capacity.
// Usage: warp_work_queue [--frames N] [--out FILE] [--deterministic] (threads in index order, as
// Warp's cpu launches run them)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "kjit/kjit.hpp"
#include "port_output.hpp"

namespace work_queue {
using namespace kjit::dsl;
KJIT_MODULE(warp_work_queue)

/// A read that goes to memory.
inline const auto volatile_read = func("volatile_read", [](Array<Int> ptr, Int index) {
  Int value = atomic_add(ptr, index, 0);
  return value;
});

KJIT_STRUCT(WorkQueue, (Array<Int>, buffer), (Int, capacity), (Array<Int>, head), (Array<Int>, tail));

inline const auto enqueue = func("enqueue", [](Value<WorkQueue> queue, Int item) {
  While([] { return Bool(true); }, [&] {
    // Read current head and tail atomically
    Int current_tail = volatile_read(queue.tail(), 0);
    Int current_head = volatile_read(queue.head(), 0);
    // Check if queue is full
    If((current_tail - current_head) >= queue.capacity(), [&] { Return(Bool(false)); });
    // Try to increment tail atomically
    Int index = current_tail % queue.capacity();
    If(atomic_cas(queue.tail(), 0, current_tail, current_tail + 1) == current_tail, [&] {
      queue.buffer()[index] = item;
      Return(Bool(true));
    });
    // Retry if another thread changed tail
  });
  return Bool(false);  // not reached: the loop only ends by returning
});

inline const auto dequeue = func("dequeue", [](Value<WorkQueue> queue) {
  While([] { return Bool(true); }, [&] {
    // Read current head and tail atomically
    Int current_head = volatile_read(queue.head(), 0);
    Int current_tail = volatile_read(queue.tail(), 0);
    // Check if queue is empty
    If(current_head >= current_tail, [&] { Return(std::make_tuple(Bool(false), Int(0))); });
    // Get item at current head
    Int index = current_head % queue.capacity();
    Int item = queue.buffer()[index];
    // Try to increment head atomically
    If(atomic_cas(queue.head(), 0, current_head, current_head + 1) == current_head,
       [&] { Return(std::make_tuple(Bool(true), item)); });
    // Retry if another thread changed head
  });
  return std::make_tuple(Bool(false), Int(0));  // not reached
});

KJIT_KERNEL(process_queue, (Value<WorkQueue> queue)) {
  Var<Int> counter = 0;
  While([] { return Bool(true); }, [&] {
    auto [success, item] = dequeue(queue);
    If(!success, [&] { Break(); });
    printf("Processed item: %d\n", item);
    If(item < 1000000, [&] {
      If(!enqueue(queue, item + 1000000), [&] { printf("Failed to enqueue item: %d\n", item + 1000000); });
    });
    counter = counter + 1;
  });
}
}  // namespace work_queue

int main(int argc, char** argv) {
  int frames = 3;
  bool deterministic = false;
  std::string out;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--deterministic")) deterministic = true;
    else if (a + 1 < argc && !std::strcmp(argv[a], "--frames")) frames = std::atoi(argv[++a]);
    else if (a + 1 < argc && !std::strcmp(argv[a], "--out")) out = argv[++a];
  }
  // Create a work queue with capacity 8192, its first 4096 slots filled with 0..4095.
  const int capacity = 8192;
  std::vector<int> items(capacity, 0);
  std::iota(items.begin(), items.begin() + 4096, 0);
  kjit::NdArray buffer = kjit::NdArray::from_vector(items), head = kjit::zeros<int>({1}), tail = kjit::zeros<int>({1});
  work_queue::WorkQueue queue;
  queue.capacity = capacity;
  queue.head = head;
  queue.tail = tail;
  queue.buffer = buffer;
  kjit::LaunchOptions options;
  options.deterministic = deterministic;
  auto frame = [&] {
    buffer.copy_from(kjit::NdArray::from_vector(items));
    head.fill(0);
    tail.fill(4096);
    kjit::launch(work_queue::process_queue.def(), {1024}, {queue}, options);
  };
  const double median = warp_port::median_ms(frames, frame);
  if (!out.empty()) {
    std::vector<int> state = {head.to_vector<int>()[0], tail.to_vector<int>()[0]};
    for (int v : buffer.to_vector<int>()) state.push_back(v);
    std::ofstream(out, std::ios::binary).write(reinterpret_cast<const char*>(state.data()), std::streamsize(state.size() * sizeof(int)));
  }
  std::printf("work queue, 1024 threads: %.3f ms per frame (median of %d)\n", median, frames);
  return 0;
}

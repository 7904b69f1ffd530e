// examples/warp/port_output.hpp — what the Warp ports share to hand their results to
// scripts/warp_examples.py: an array's elements written as numpy's tofile writes them.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"

namespace warp_port {

/// Writes the elements of `a` (of type T) to `path`, as numpy's tofile does; nothing without a path.
template <class T>
void write_elements(const std::string& path, const kjit::NdArray& a) {
  if (path.empty()) return;
  std::vector<T> v = a.to_vector<T>();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(T)));
}

}  // namespace warp_port

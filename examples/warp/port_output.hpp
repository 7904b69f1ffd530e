// examples/warp/port_output.hpp — what the Warp ports share to hand their results to
// scripts/warp_examples.py: an array's elements written (and inputs read) as numpy's tofile
// writes them, and the median time of a frame.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <initializer_list>
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

/// The elements of each array in turn (positions, then velocities, ...), in one file.
template <class T>
void write_elements(const std::string& path, std::initializer_list<kjit::NdArray> arrays) {
  if (path.empty()) return;
  std::ofstream file(path, std::ios::binary);
  for (const kjit::NdArray& a : arrays) {
    std::vector<T> v = a.to_vector<T>();
    file.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(T)));
  }
}

/// The elements of type T in the file at `path` (as numpy's tofile writes them); a message on
/// stderr and an empty vector when it cannot be read or holds a partial element.
template <class T>
std::vector<T> read_elements(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const std::streamsize bytes = in ? std::streamsize(in.tellg()) : -1;
  if (bytes <= 0 || bytes % std::streamsize(sizeof(T)) != 0) {
    std::fprintf(stderr, "%s: cannot read it as elements of %zu bytes\n", path.c_str(), sizeof(T));
    return {};
  }
  std::vector<T> v(size_t(bytes) / sizeof(T));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), bytes);
  return v;
}

/// Runs `frame` once untimed (it compiles, or loads from the cache), then `frames` times; the
/// median of those in milliseconds (0 for none).
template <class F>
double median_ms(int frames, const F& frame) {
  frame();
  std::vector<double> ms;
  for (int f = 0; f < frames; ++f) {
    const auto t0 = std::chrono::steady_clock::now();
    frame();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms.empty() ? 0.0 : ms[ms.size() / 2];
}

}  // namespace warp_port

// bench/side_by_side/runner.hpp — what the two C++ sides of the side-by-side benchmark (kjit and the
// hand loop) share: the input files cpu_side_by_side.py writes, and the line protocol on stdin
// through which the script interleaves them with Dr.Jit and Warp.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace side_by_side {

/// Scalars of the three kernels; cpu_side_by_side.py uses the same ones.
constexpr float kSaxpyA = 2.0f, kSpringK = 10.0f, kDampC = 1.1f;
constexpr int kDampSteps = 16;

/// Reads a raw little-endian file of T written by numpy's tofile.
template <class T>
std::vector<T> read_raw(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path);
  std::fseek(f, 0, SEEK_END);
  const long bytes = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  std::vector<T> v(size_t(bytes) / sizeof(T));
  const size_t got = std::fread(v.data(), sizeof(T), v.size(), f);
  std::fclose(f);
  if (got != v.size()) throw std::runtime_error("short read of " + path);
  return v;
}

inline void write_raw(const std::string& path, const void* data, size_t bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, bytes, f) != bytes) throw std::runtime_error("cannot write " + path);
  std::fclose(f);
}

/// The inputs of all three kernels, as the script wrote them (Vec3 arrays as 3 floats each).
struct Inputs {
  std::vector<float> sx, sy, sg;           ///< saxpy: x, y, the seed on out
  std::vector<float> px, rest, pg;         ///< springs: positions, rest lengths, the seed on forces
  std::vector<int> ia, ib;                 ///< springs: the two ends
  std::vector<float> dv, dg;               ///< damp: values, the seed on out
  explicit Inputs(const std::string& dir)
      : sx(read_raw<float>(dir, "saxpy_x.f32")), sy(read_raw<float>(dir, "saxpy_y.f32")),
        sg(read_raw<float>(dir, "saxpy_g.f32")), px(read_raw<float>(dir, "springs_x.f32")),
        rest(read_raw<float>(dir, "springs_rest.f32")), pg(read_raw<float>(dir, "springs_g.f32")),
        ia(read_raw<int>(dir, "springs_ia.i32")), ib(read_raw<int>(dir, "springs_ib.i32")),
        dv(read_raw<float>(dir, "damp_v.f32")), dg(read_raw<float>(dir, "damp_g.f32")) {}
};

/// The one argument of both programs, the folder of the input files; exits with a usage line
/// when it is missing.
inline std::string data_dir_argument(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
    std::exit(2);
  }
  return argv[1];
}

/// One timed case ("saxpy_fwd", ...): `run` is what is timed; `reset` zeroes what it writes or
/// accumulates into, so that one checked run gives the plain result.
struct Case {
  std::function<void()> run, reset;
  std::vector<std::pair<const void*, size_t>> results;  ///< buffers written, in order, by `check`
};

/// Serves the script: `time NAME` runs the case once and prints its milliseconds; `check NAME PATH`
/// resets, runs once and writes its result buffers, one after another, to PATH; `quit` ends.
/// `other` answers any other command (returns false for an unknown one).
inline int serve(std::map<std::string, Case>& cases,
                 const std::function<bool(std::istringstream&, const std::string&)>& other = {}) {
  std::string line;
  std::cout << "ready" << std::endl;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd, name;
    in >> cmd;
    try {
      if (cmd == "quit") return 0;
      if (cmd == "time" || cmd == "check") {
        in >> name;
        auto it = cases.find(name);
        if (it == cases.end()) throw std::runtime_error("unknown case " + name);
        if (cmd == "time") {
          const auto t0 = std::chrono::steady_clock::now();
          it->second.run();
          const auto t1 = std::chrono::steady_clock::now();
          std::cout << std::chrono::duration<double, std::milli>(t1 - t0).count() << std::endl;
        } else {
          std::string path;
          in >> path;
          it->second.reset();
          it->second.run();
          std::string bytes;
          for (auto& [p, n] : it->second.results) bytes.append(static_cast<const char*>(p), n);
          write_raw(path, bytes.data(), bytes.size());
          std::cout << "ok" << std::endl;
        }
      } else if (!other || !other(in, cmd)) {
        throw std::runtime_error("unknown command " + cmd);
      }
    } catch (const std::exception& e) {
      std::cout << "error " << e.what() << std::endl;
    }
  }
  return 0;
}

}  // namespace side_by_side

// bench/mesh_side_by_side/main.cpp — kjit's side of bench/mesh_vs_warp.py: builds a kjit::Mesh
// over the points and triangles that script writes, and times the build, closest-point queries
// and ray casts (median of `reps` after one warm-up), writing the query results for the script
// to compare with Warp's.
// Usage: bench_mesh_side_by_side WHAT DIR REPS   (WHAT: build, closest, ray, or ray_binary: the
// rays through the binary BVH, the mesh's ray tree left out; prints "ms_median ms_min cpu_ms_median":
// the last the process's cpu time, all threads, which other processes' load inflates less)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "kjit/dsl/mesh.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"

namespace mesh_bench {
using namespace kjit::dsl;
KJIT_MODULE(bench_mesh)

KJIT_KERNEL(closest, (Value<Mesh> mesh, Array<Vec3f> pts, Array<int> face, Array<Vec2f> uv)) {
  Int i = tid();
  Value<MeshQueryPoint> q = mesh_query_point_no_sign(mesh, pts[i], 1.0e6f);
  face[i] = where(q.result(), q.face(), -1);
  uv[i] = Vec2f(q.u(), q.v());
}
KJIT_KERNEL(ray, (Value<Mesh> mesh, Array<Vec3f> starts, Array<Vec3f> dirs, Array<int> face, Array<float> t)) {
  Int i = tid();
  Value<MeshQueryRay> q = mesh_query_ray(mesh, starts[i], dirs[i], 1.0e6f);
  face[i] = where(q.result(), q.face(), -1);
  t[i] = q.t();
}
}  // namespace mesh_bench

namespace {
template <class T>
std::vector<T> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) { std::fprintf(stderr, "cannot read %s\n", path.c_str()); std::exit(2); }
  const size_t bytes = size_t(f.tellg());
  std::vector<T> v(bytes / sizeof(T));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), std::streamsize(bytes));
  return v;
}
template <class T>
void write_file(const std::string& path, const std::vector<T>& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(T)));
}
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
double cpu_ms() { return 1e3 * double(std::clock()) / CLOCKS_PER_SEC; }
}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) { std::fprintf(stderr, "usage: %s build|closest|ray|ray_binary DIR REPS\n", argv[0]); return 2; }
  const std::string what = argv[1], dir = argv[2];
  const int reps = std::atoi(argv[3]);
  using kjit::vec3f;
  kjit::NdArray points = kjit::from_vector(read_file<vec3f>(dir + "/points.bin"));
  kjit::NdArray indices = kjit::from_vector(read_file<int32_t>(dir + "/indices.bin"));
  std::vector<double> times, cpu;
  // Runs `step` reps + 1 times, timing all but the warm-up (wall and process cpu).
  auto timed = [&](int reps, const auto& step) {
    for (int r = 0; r <= reps; ++r) {
      const double c0 = cpu_ms();
      const auto t0 = std::chrono::steady_clock::now();
      step();
      if (r) {
        times.push_back(ms_since(t0));
        cpu.push_back(cpu_ms() - c0);
      }
    }
  };
  if (what == "build") {
    timed(reps, [&] { kjit::Mesh mesh(points, indices); });
  } else {
    kjit::Mesh mesh(points, indices);
    if (what == "closest") {
      kjit::NdArray q = kjit::from_vector(read_file<vec3f>(dir + "/queries.bin"));
      const int64_t n = q.size();
      kjit::NdArray face = kjit::zeros<int32_t>({n}), uv = kjit::zeros<kjit::vec2f>({n});
      timed(reps, [&] { kjit::launch(mesh_bench::closest, n, mesh, q, face, uv); });
      write_file(dir + "/kjit_face.bin", face.to_vector<int32_t>());
      write_file(dir + "/kjit_uv.bin", uv.to_vector<kjit::vec2f>());
    } else if (what == "ray" || what == "ray_binary") {
      kjit::NdArray s = kjit::from_vector(read_file<vec3f>(dir + "/starts.bin"));
      kjit::NdArray d = kjit::from_vector(read_file<vec3f>(dir + "/dirs.bin"));
      const int64_t n = s.size();
      kjit::NdArray face = kjit::zeros<int32_t>({n}), t = kjit::zeros<float>({n});
      kjit::dsl::Mesh binary = mesh.view();
      binary.bvh_rays = kjit::NdArray();
      timed(reps, [&] {
        if (what == "ray") kjit::launch(mesh_bench::ray, n, mesh, s, d, face, t);
        else kjit::launch(mesh_bench::ray, n, binary, s, d, face, t);
      });
      write_file(dir + "/kjit_face.bin", face.to_vector<int32_t>());
      write_file(dir + "/kjit_t.bin", t.to_vector<float>());
    } else {
      std::fprintf(stderr, "unknown %s\n", what.c_str());
      return 2;
    }
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf("%.3f %.3f %.3f\n", times[times.size() / 2], times[0], cpu[cpu.size() / 2]);
  return 0;
}

// bench/mesh_rays_embree/main.cpp — Embree's time for the ray-cast row of the geometry
// benchmark (issue 34: kjit's mesh_query_ray within 2x of Embree): builds Embree's BVH over a
// triangle mesh and casts rays with rtcIntersect1 over all cores, on the inputs of a file
// that the kjit/Warp side writes (so the three peers cast the very same rays), and prints
// the median build and trace times with the hit count and the sum of hit distances to compare
// results.
//
//   bench_mesh_rays_embree INPUT [REPEATS]
//
// INPUT: int64 nv, nt, nr; float32 points[nv][3]; int32 indices[nt][3]; float32
// origins[nr][3]; float32 directions[nr][3] (little-endian, as numpy's tofile writes them).
#include <embree3/rtcore.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <thread>
#include <vector>

namespace {

struct Input {
  std::vector<float> points, origins, directions;
  std::vector<uint32_t> indices;
  int64_t nv = 0, nt = 0, nr = 0;
};

bool read_input(const char* path, Input& in) {
  std::ifstream f(path, std::ios::binary);
  int64_t head[3];
  if (!f.read(reinterpret_cast<char*>(head), sizeof head)) return false;
  in.nv = head[0], in.nt = head[1], in.nr = head[2];
  if (in.nv <= 0 || in.nt <= 0 || in.nr <= 0) return false;
  // Embree reads each vertex as 16 bytes: the last one needs 4 bytes of padding.
  in.points.assign(size_t(in.nv) * 3 + 1, 0.0f);
  in.indices.resize(size_t(in.nt) * 3);
  in.origins.resize(size_t(in.nr) * 3);
  in.directions.resize(size_t(in.nr) * 3);
  auto read = [&](void* p, size_t bytes) { return bool(f.read(static_cast<char*>(p), std::streamsize(bytes))); };
  return read(in.points.data(), size_t(in.nv) * 12) && read(in.indices.data(), size_t(in.nt) * 12) &&
         read(in.origins.data(), size_t(in.nr) * 12) && read(in.directions.data(), size_t(in.nr) * 12);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Traced {
  int64_t hits = 0;
  double t_sum = 0;
};

/// Casts rays [begin, end) and returns their hit count and the sum of their distances.
Traced trace(RTCScene scene, const Input& in, int64_t begin, int64_t end) {
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  Traced out;
  for (int64_t i = begin; i < end; ++i) {
    RTCRayHit rh{};
    rh.ray.org_x = in.origins[size_t(i) * 3], rh.ray.org_y = in.origins[size_t(i) * 3 + 1], rh.ray.org_z = in.origins[size_t(i) * 3 + 2];
    rh.ray.dir_x = in.directions[size_t(i) * 3], rh.ray.dir_y = in.directions[size_t(i) * 3 + 1], rh.ray.dir_z = in.directions[size_t(i) * 3 + 2];
    rh.ray.tnear = 0.0f;
    rh.ray.tfar = std::numeric_limits<float>::infinity();
    rh.ray.mask = ~0u;
    rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(scene, &context, &rh);
    if (rh.hit.geomID != RTC_INVALID_GEOMETRY_ID) ++out.hits, out.t_sum += rh.ray.tfar;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s INPUT [REPEATS]\n", argv[0]);
    return 2;
  }
  Input in;
  if (!read_input(argv[1], in)) {
    std::fprintf(stderr, "bench_mesh_rays_embree: cannot read a mesh and rays from '%s'\n", argv[1]);
    return 2;
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  RTCDevice device = rtcNewDevice(nullptr);
  std::vector<double> builds, traces;
  Traced result;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    RTCScene scene = rtcNewScene(device);
    RTCGeometry geometry = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
    rtcSetSharedGeometryBuffer(geometry, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, in.points.data(), 0, 12, size_t(in.nv));
    rtcSetSharedGeometryBuffer(geometry, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, in.indices.data(), 0, 12, size_t(in.nt));
    rtcCommitGeometry(geometry);
    rtcAttachGeometry(scene, geometry);
    rtcReleaseGeometry(geometry);
    rtcCommitScene(scene);  // the BVH build (Embree's own threads)
    builds.push_back(seconds_since(t0));

    t0 = std::chrono::steady_clock::now();
    std::vector<Traced> parts(threads);
    std::vector<std::thread> pool;
    for (unsigned k = 0; k < threads; ++k)
      pool.emplace_back([&, k] { parts[k] = trace(scene, in, in.nr * k / threads, in.nr * (k + 1) / threads); });
    for (std::thread& t : pool) t.join();
    traces.push_back(seconds_since(t0));
    result = Traced{};
    for (const Traced& p : parts) result.hits += p.hits, result.t_sum += p.t_sum;
    rtcReleaseScene(scene);
  }
  rtcReleaseDevice(device);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("embree build_ms %.3f trace_ms %.3f threads %u triangles %lld rays %lld hits %lld t_sum %.6e\n",
              median(builds) * 1e3, median(traces) * 1e3, threads, (long long)in.nt, (long long)in.nr, (long long)result.hits,
              result.t_sum);
  return 0;
}

// examples/warp/alloc_tracker.cpp — Warp 1.19's warp/examples/core/example_alloc_tracker.py in
// kjit: a particle simulation (gravity, integration, a bouncing ground) instrumented with the
// memory tracker, globally (Part 1: kjit::set_memory_tracking, print_memory_report) and in
// nested scopes (Part 2: kjit::ScopedMemoryTracker, report, clear). Writes to --out the
// positions at the end of each part (float32 x, y, z per particle) and, per report, its
// allocations, bytes allocated, peak bytes, live allocations and live bytes (int64), for
// scripts/warp_examples.sh to compare with Warp's; prints the milliseconds per step.
// Usage: warp_alloc_tracker [--particles N] [--init FILE] [--frames N] [--out FILE]
//   --init: the initial positions (float32, N x 3; Warp's numpy default_rng(42) draws); without
//   it, a simple generator of kjit's own places the particles alike.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/memory_tracking.hpp"

namespace alloc_tracker {
using namespace kjit::dsl;
KJIT_MODULE(warp_alloc_tracker)

KJIT_KERNEL(apply_gravity, (Array<Vec3f> velocities, Float dt)) {
  Int tid = kjit::dsl::tid();
  velocities[tid] = velocities[tid] + Vec3f(0.0f, -9.81f, 0.0f) * dt;
}

KJIT_KERNEL(integrate, (Array<Vec3f> positions, Array<Vec3f> velocities, Float dt)) {
  Int tid = kjit::dsl::tid();
  positions[tid] = positions[tid] + velocities[tid] * dt;
}

KJIT_KERNEL(enforce_ground, (Array<Vec3f> positions, Array<Vec3f> velocities, Float restitution)) {
  Int tid = kjit::dsl::tid();
  Vec3f p = positions[tid];
  Vec3f v = velocities[tid];
  If(p[1] < 0.0f, [&] {
    positions[tid] = Vec3f(p[0], 0.0f, p[2]);
    velocities[tid] = Vec3f(v[0], abs(v[1]) * restitution, v[2]);
  });
}
}  // namespace alloc_tracker

namespace {

using kjit::vec3f;

struct ParticleSim {
  explicit ParticleSim(const std::vector<vec3f>& init)
      : n(int64_t(init.size())),
        positions(kjit::from_vector(init)),
        velocities(kjit::zeros<vec3f>({n})),
        forces(kjit::zeros<vec3f>({n})),
        // Regular host buffer for CPU-side analysis
        host_buffer(kjit::zeros<vec3f>({n})),
        // Warp's pinned host staging buffer: kjit has no pinned memory, a cpu array stands in
        staging_buffer(kjit::zeros<vec3f>({n})) {}

  void step() {
    kjit::launch(alloc_tracker::apply_gravity, n, velocities, dt);
    kjit::launch(alloc_tracker::integrate, n, positions, velocities, dt);
    kjit::launch(alloc_tracker::enforce_ground, n, positions, velocities, 0.6f);
  }
  /// Copies positions to the staging buffer, then to the host buffer.
  const kjit::NdArray& readback_positions() {
    staging_buffer.copy_from(positions);
    host_buffer.copy_from(staging_buffer);
    return host_buffer;
  }
  /// Clones the current positions: an allocation per call, on purpose.
  kjit::NdArray save_snapshot() const { return positions.copy(); }

  int64_t n;
  float dt = float(1.0 / 60.0);
  kjit::NdArray positions, velocities, forces, host_buffer, staging_buffer;
};

/// Every report's numbers and the positions at the end of each part, for the comparison.
struct Outputs {
  std::vector<float> positions;
  std::vector<int64_t> reports;
  void report(const kjit::MemoryReport& r) {
    for (size_t v : {r.allocations, r.allocated_bytes, r.peak_bytes, r.live_allocations, r.live_bytes})
      reports.push_back(int64_t(v));
  }
  void keep(const kjit::NdArray& p) {
    const auto values = p.to_vector<vec3f>();
    for (const vec3f& v : values) positions.insert(positions.end(), {v[0], v[1], v[2]});
  }
};

void banner(const char* title) {
  std::printf("%s\n  %s\n%s\n\n", std::string(70, '=').c_str(), title, std::string(70, '=').c_str());
}

void run_global(const std::vector<vec3f>& init, Outputs& out) {
  banner("Part 1: Global tracking  (kjit::set_memory_tracking(true))");
  ParticleSim sim(init);
  sim.step();  // compiles (or loads) the kernels before the first report
  std::printf("\nAfter creating simulation + first step:\n(Note: each device is listed separately)\n");
  kjit::print_memory_report();
  out.report(kjit::memory_report());
  for (int step = 1; step <= 30; ++step) sim.step();
  kjit::NdArray snapshot = sim.save_snapshot();
  const kjit::NdArray& host_pos = sim.readback_positions();
  double mean_y = 0;
  for (const vec3f& p : host_pos.to_vector<vec3f>()) mean_y += p[1];
  std::printf("\nAfter 30 steps + snapshot + readback (mean y = %.2f):\n", mean_y / double(sim.n));
  kjit::print_memory_report();
  out.report(kjit::memory_report());
  out.keep(host_pos);
}

void run_scoped(const std::vector<vec3f>& init, Outputs& out, int n_steps = 90, int report_every = 30) {
  std::printf("\n");
  banner("Part 2: Scoped tracking  (kjit::ScopedMemoryTracker)");
  std::vector<kjit::NdArray> snapshots;
  std::optional<kjit::ScopedMemoryTracker> tracker(std::in_place, "run", false);
  std::optional<ParticleSim> sim;
  {
    kjit::ScopedMemoryTracker scope("init", false);
    sim.emplace(init);
    sim->step();
  }
  std::printf("\nAfter init + first step:\n");
  tracker->print();
  out.report(tracker->report());
  for (int step = 1; step <= n_steps; ++step) {
    sim->step();
    if (step % report_every == 0) {
      {
        kjit::ScopedMemoryTracker scope("snapshot", false);
        snapshots.push_back(sim->save_snapshot());
      }
      std::printf("\nStep %d:\n", step);
      tracker->print();
      out.report(tracker->report());
    }
  }
  // clear() resets all counters -- useful for isolating a specific phase
  tracker->clear();
  {
    kjit::ScopedMemoryTracker scope("after_clear", false);
    snapshots.push_back(sim->save_snapshot());
  }
  std::printf("\nAfter clear() + one more snapshot  (only new allocations):\n");
  tracker->print();
  out.report(tracker->report());
  out.keep(sim->positions);
  tracker.reset();  // the scope ends here, as Warp's `with` block, before the arrays go
  sim.reset();
  snapshots.clear();
  std::printf("\nAfter cleanup  (freed arrays gone from live list):\n");
  kjit::print_memory_report();
  out.report(kjit::memory_report());
}

/// Particles as Warp's example places them (x, z in [-5, 5), y in [2, 20)), from a generator of
/// kjit's own: for runs without Warp's draws.
std::vector<vec3f> own_initial_positions(int64_t n) {
  uint64_t state = 42;
  auto uniform = [&](float lo, float hi) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * float(double(state >> 11) / double(uint64_t(1) << 53));
  };
  std::vector<vec3f> init(size_t(n), vec3f(0.0f, 0.0f, 0.0f));
  for (vec3f& p : init) p = vec3f(uniform(-5, 5), 0.0f, uniform(-5, 5));
  for (vec3f& p : init) p = vec3f(p[0], uniform(2, 20), p[2]);
  return init;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 200000;
  int frames = 20;
  std::string init_file, out;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--particles")) n = std::atoll(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--init")) init_file = argv[a + 1];
    else if (!std::strcmp(argv[a], "--frames")) frames = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--out")) out = argv[a + 1];
  }
  std::vector<vec3f> init = own_initial_positions(n);
  if (!init_file.empty()) {
    std::ifstream in(init_file, std::ios::binary);
    in.read(reinterpret_cast<char*>(init.data()), std::streamsize(init.size() * sizeof(vec3f)));
    if (in.gcount() != std::streamsize(init.size() * sizeof(vec3f))) {
      std::fprintf(stderr, "%s: fewer than %lld particles\n", init_file.c_str(), (long long)n);
      return 1;
    }
  }
  // Warp's example sets wp.config.track_memory before wp.init(); here before the first array.
  kjit::set_memory_tracking(true);
  std::printf("Device: cpu\n\n");
  Outputs outputs;
  run_global(init, outputs);
  run_scoped(init, outputs);
  if (!out.empty()) {
    std::ofstream f(out, std::ios::binary);
    f.write(reinterpret_cast<const char*>(outputs.positions.data()), std::streamsize(outputs.positions.size() * 4));
    f.write(reinterpret_cast<const char*>(outputs.reports.data()), std::streamsize(outputs.reports.size() * 8));
  }
  // The simulation step alone, timed (no allocations in it: tracking costs it nothing).
  ParticleSim sim(init);
  sim.step();
  std::vector<double> ms;
  for (int f = 0; f < frames; ++f) {
    auto t0 = std::chrono::steady_clock::now();
    sim.step();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  if (frames > 0)
    std::printf("\nparticle sim, %lld particles: %.3f ms per frame (median of %d)\n", (long long)n, ms[ms.size() / 2], frames);
  return 0;
}

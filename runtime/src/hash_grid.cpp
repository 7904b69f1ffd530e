// kjit::HashGrid: a parallel counting sort of points into hashed cells, on the host.
#include "kjit/runtime/hash_grid.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kjit/error.hpp"
#include "kjit/runtime/internal/thread_pool.hpp"

namespace kjit {

namespace {
/// The lattice coordinate of v (in cell widths), clamped to +-2^30 as the kernels' query
/// clamps it (kjit/dsl/hash_grid.hpp): the same float operations, so the same cell.
int32_t cell_coord(float v) {
  float f = std::floor(v);
  return int32_t(std::min(std::max(f, -1073741824.0f), 1073741824.0f));
}
int32_t wrap(int32_t c, int32_t d) { return (c % d + d) % d; }

std::string float_text(float v) { return std::to_string(v); }

/// Runs body(part) for part in [0, parts) on the pool: a range of 64 indices per part, as
/// the pool's chunks are multiples of 64.
template <class F>
void for_parts(int parts, F& body) {
  auto run = [](void* ctx, int64_t begin, int64_t end) {
    for (int64_t part = begin / 64; part < (end + 63) / 64; ++part) (*static_cast<F*>(ctx))(int(part));
  };
  detail::ThreadPool::global().parallel_for(int64_t(parts) * 64, 64, run, &body);
}
}  // namespace

HashGrid::HashGrid(int dim_x, int dim_y, int dim_z, const Device& device) : dims_{dim_x, dim_y, dim_z}, device_(device) {
  int64_t cells = int64_t(dim_x) * dim_y * dim_z;
  if (dim_x < 1 || dim_y < 1 || dim_z < 1 || cells >= (int64_t(1) << 31))
    throw Error(ErrorKind::User, "kjit::HashGrid: dims must be at least 1 and hold fewer than 2^31 cells, got " +
                                     std::to_string(dim_x) + " x " + std::to_string(dim_y) + " x " + std::to_string(dim_z));
  cell_starts_ = zeros<int32_t>({cells}, device_);
  cell_ends_ = zeros<int32_t>({cells}, device_);
  point_ids_ = zeros<int32_t>({1}, device_);
}

void HashGrid::check_usable(const char* what) const {
  if (freed_) throw Error(ErrorKind::User, std::string("kjit::HashGrid: ") + what + " after free()");
}

void HashGrid::reserve(int64_t num_points) {
  check_usable("reserve()");
  if (num_points < 0 || num_points >= (int64_t(1) << 31))
    throw Error(ErrorKind::User, "kjit::HashGrid::reserve: " + std::to_string(num_points) + " points: at most 2^31 - 1");
  if (num_points > point_ids_.size()) {
    NdArray bigger = zeros<int32_t>({num_points}, device_);
    // The last build stays usable until the next one.
    if (num_points_ > 0) bigger.slice(0, num_points_).copy_from(point_ids_.slice(0, num_points_));
    point_ids_ = bigger;
  }
}

void HashGrid::free() {
  point_ids_ = NdArray();
  cell_starts_ = NdArray();
  cell_ends_ = NdArray();
  num_points_ = 0;
  freed_ = true;
}

NdArray HashGrid::point_ids() const {
  check_usable("point_ids()");
  return point_ids_.slice(0, num_points_);
}

void HashGrid::build(const NdArray& points, float radius) {
  check_usable("build()");
  if (!(radius > 0) || !std::isfinite(radius))
    throw Error(ErrorKind::User, "kjit::HashGrid::build: radius must be positive and finite, got " + float_text(radius));
  // A subnormal radius has no float inverse: cell coordinates would be 0 * inf = NaN, a cell
  // the kernels' query could not find again.
  if (!std::isfinite(1.0f / radius)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", double(radius));
    throw Error(ErrorKind::User, "kjit::HashGrid::build: radius " + std::string(text) +
                                     " is too small: 1 / radius overflows float32");
  }
  if (!points.defined() || points.ndim() != 1 || !(points.element() == ir_type_of<vec3f>()))
    throw Error(ErrorKind::User, "kjit::HashGrid::build: points must be a 1-D array of vec3f, got " +
                                     (points.defined() ? points.element().str() + " of " + std::to_string(points.ndim()) + " dimensions"
                                                       : std::string("no array")));
  const int64_t n = points.size();
  if (n >= (int64_t(1) << 31)) throw Error(ErrorKind::User, "kjit::HashGrid::build: at most 2^31 - 1 points");
  NdArray host = points.device().is_cpu() && points.is_contiguous() ? points : points.to(Device::cpu());
  const vec3f* p = static_cast<const vec3f*>(host.data());
  const int32_t dx = dims_[0], dy = dims_[1], dz = dims_[2];
  const int64_t cells = int64_t(dx) * dy * dz;
  const float inv = 1.0f / radius;

  // 1. Each point's cell (and the first point that is not finite).
  std::vector<int32_t> cell(size_t(std::max<int64_t>(n, 1)));
  std::atomic<int64_t> bad{n};
  struct Ctx { const vec3f* p; int32_t* cell; float inv; int32_t dx, dy, dz; std::atomic<int64_t>* bad; } ctx{p, cell.data(), inv, dx, dy, dz, &bad};
  auto cells_of = [](void* c, int64_t b, int64_t e) {
    Ctx& x = *static_cast<Ctx*>(c);
    for (int64_t i = b; i < e; ++i) {
      const vec3f& q = x.p[i];
      if (!std::isfinite(q.c[0]) || !std::isfinite(q.c[1]) || !std::isfinite(q.c[2])) {
        int64_t seen = x.bad->load();
        while (i < seen && !x.bad->compare_exchange_weak(seen, i)) {}
        continue;
      }
      int32_t cx = wrap(cell_coord(q.c[0] * x.inv), x.dx), cy = wrap(cell_coord(q.c[1] * x.inv), x.dy);
      int32_t cz = wrap(cell_coord(q.c[2] * x.inv), x.dz);
      x.cell[i] = (cz * x.dy + cy) * x.dx + cx;
    }
  };
  if (n > 0) detail::ThreadPool::global().parallel_for(n, 16384, cells_of, &ctx);
  if (bad.load() < n) {
    const vec3f& q = p[bad.load()];
    throw Error(ErrorKind::User, "kjit::HashGrid::build: point " + std::to_string(bad.load()) + " is (" + float_text(q.c[0]) +
                                     ", " + float_text(q.c[1]) + ", " + float_text(q.c[2]) + "): coordinates must be finite");
  }

  // The points are good: from here on the grid changes.
  reserve(n);
  const bool on_host = device_.is_cpu();
  NdArray ids = on_host ? point_ids_ : zeros<int32_t>({std::max<int64_t>(n, 1)});
  NdArray starts = on_host ? cell_starts_ : zeros<int32_t>({cell_starts_.size()});
  NdArray ends = on_host ? cell_ends_ : zeros<int32_t>({cell_ends_.size()});
  int32_t* id = static_cast<int32_t*>(ids.data());
  int32_t* start = static_cast<int32_t*>(starts.data());
  int32_t* end = static_cast<int32_t*>(ends.data());

  // 2. A counting sort, parallel over ranges of cells: each part scans every point and keeps
  // those of its cells, so the order within a cell is the points' order, for any thread count.
  const int parts = int(std::min<int64_t>(cells, int64_t(detail::ThreadPool::global().size())));
  std::vector<int64_t> total(size_t(parts) + 1, 0);
  auto part_begin = [&](int k) { return int32_t(cells * k / parts); };
  auto count = [&](int k) {
    const int32_t b = part_begin(k), e = part_begin(k + 1);
    std::fill(end + b, end + e, 0);
    for (int64_t i = 0; i < n; ++i)
      if (cell[size_t(i)] >= b && cell[size_t(i)] < e) ++end[cell[size_t(i)]];
    int64_t sum = 0;
    for (int32_t c = b; c < e; ++c) sum += end[c];
    total[size_t(k) + 1] = sum;
  };
  for_parts(parts, count);
  for (int k = 0; k < parts; ++k) total[size_t(k) + 1] += total[size_t(k)];
  auto scatter = [&](int k) {
    const int32_t b = part_begin(k), e = part_begin(k + 1);
    int32_t running = int32_t(total[size_t(k)]);
    for (int32_t c = b; c < e; ++c) {
      int32_t m = end[c];
      start[c] = running;
      end[c] = running;
      running += m;
    }
    for (int64_t i = 0; i < n; ++i) {
      int32_t c = cell[size_t(i)];
      if (c >= b && c < e) id[end[c]++] = int32_t(i);
    }
  };
  for_parts(parts, scatter);

  if (!on_host) {
    point_ids_.slice(0, std::max<int64_t>(n, 1)).copy_from(ids);
    cell_starts_.copy_from(starts);
    cell_ends_.copy_from(ends);
  }
  cell_width_ = radius;
  num_points_ = n;
  built_ = true;
}

dsl::HashGrid HashGrid::launch_value() const {
  check_usable("a launch");
  if (!built_) throw Error(ErrorKind::User, "kjit::HashGrid: a launch before build(): build the grid from points first");
  dsl::HashGrid g{};
  g.point_ids = point_ids_.slice(0, num_points_);
  g.cell_starts = cell_starts_;
  g.cell_ends = cell_ends_;
  g.dim_x = dims_[0];
  g.dim_y = dims_[1];
  g.dim_z = dims_[2];
  g.cell_width_inv = 1.0f / cell_width_;
  return g;
}

}  // namespace kjit

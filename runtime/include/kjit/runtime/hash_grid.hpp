// kjit/runtime/hash_grid.hpp — kjit::HashGrid, Warp's wp.HashGrid: points sorted into the cells
// of a hashed grid, built on the host, passed to kernels taking a `Value<HashGrid>`
// (kjit/dsl/hash_grid.hpp has the struct and the neighbour query).
#pragma once

#include <cstdint>

#include "kjit/dsl/hash_grid.hpp"
#include "kjit/runtime/ndarray.hpp"

namespace kjit {

/// A hash grid of dim_x * dim_y * dim_z cells. build() sorts points into cells of the width
/// it is given; a kernel's query then visits the points of the cells near a position. The
/// grid owns its arrays (on its device); launch arguments refer to them, so the grid must
/// outlive the launches that use it. On a CUDA device the grid is built on the host and its
/// arrays copied there.
class HashGrid {
 public:
  /// What launch errors call it.
  static constexpr const char* kObjectName = "kjit::HashGrid";

  /// A grid of the given cells per axis (each >= 1, their product < 2^31) on `device`.
  HashGrid(int dim_x, int dim_y, int dim_z, const Device& device = Device::cpu());

  /// Sorts `points` (a 1-D array of vec3f, on any device) into cells of width `radius`, as
  /// Warp's HashGrid.build. A User error for a radius that is not positive and finite, for a
  /// point with a NaN or infinite coordinate (naming its index), and for a freed grid.
  void build(const NdArray& points, float radius);
  /// Makes room for `num_points` points, so that builds up to that size allocate nothing.
  void reserve(int64_t num_points);
  /// Releases the arrays; launches with the grid are then refused, and build() too.
  void free();

  int dim_x() const { return dims_[0]; }
  int dim_y() const { return dims_[1]; }
  int dim_z() const { return dims_[2]; }
  /// The width of a cell: the radius of the last build (0 before one).
  float cell_width() const { return cell_width_; }
  /// The points of the last build.
  int64_t num_points() const { return num_points_; }
  const Device& device() const { return device_; }
  /// Point indices in cell order (num_points() of them, a view of the reserved array).
  NdArray point_ids() const;
  /// Per cell, the range [cell_starts[c], cell_ends[c]) of point_ids() in it.
  const NdArray& cell_starts() const { return cell_starts_; }
  const NdArray& cell_ends() const { return cell_ends_; }

  /// The struct a kernel receives; a User error when the grid was never built or was freed.
  dsl::HashGrid launch_value() const;

 private:
  void check_usable(const char* what) const;

  int dims_[3];
  Device device_;
  float cell_width_ = 0;
  int64_t num_points_ = 0;
  bool built_ = false, freed_ = false;
  NdArray point_ids_;  ///< capacity >= num_points_
  NdArray cell_starts_, cell_ends_;
};

}  // namespace kjit

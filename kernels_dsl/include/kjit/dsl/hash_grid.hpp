// kjit/dsl/hash_grid.hpp — hash grids in kernels (Warp's wp.HashGrid): the HashGrid struct a
// kernel takes (the host object kjit::HashGrid converts to it at a launch) and the neighbour
// query loop, written as ordinary DSL code over the grid's arrays:
//
//   KJIT_KERNEL(count, (Value<HashGrid> grid, Array<vec3f> x, Float r, Array<int> out)) {
//     Int i = hash_grid_point_id(grid, tid());
//     auto q = hash_grid_query(grid, x[i], r);
//     Var<Int> j = 0, n = 0;
//     While([&] { return hash_grid_query_next(q, j); }, [&] {
//       If(length(x[j] - x[i]) <= r, [&] { n = n + 1; });
//     });
//     out[i] = n;
//   }
//
// As Warp's, a query visits every point of the cells that the box [p - r, p + r] touches (the
// caller tests the distance), each point once even where the box wraps around the grid. The
// results are indices: they carry no gradient. Opt-in: not part of <kjit/dsl.hpp>.
#pragma once

#include "kjit/dsl.hpp"

namespace kjit::dsl {

/// A built hash grid as a kernel sees it: the point indices sorted by cell, each cell's range
/// [cell_starts[c], cell_ends[c]) in them, the grid's cells per axis and 1 / cell width.
/// Cell (x, y, z) of an unbounded lattice maps to c = (z mod dim_z) dim_y dim_x +
/// (y mod dim_y) dim_x + (x mod dim_x).
KJIT_STRUCT(HashGrid, (Array<int32_t>, point_ids), (Array<int32_t>, cell_starts), (Array<int32_t>, cell_ends),
            (Int, dim_x), (Int, dim_y), (Int, dim_z), (Float, cell_width_inv));

namespace detail {
/// The lattice coordinate of v (in cell widths), clamped to +-2^30 so that the box's extent
/// never overflows (a point that far out is in a wrapped cell all the same).
inline Int hash_grid_coord(const Float& v) { return Int(min(max(floor(v), Float(-1073741824.0f)), Float(1073741824.0f))); }
/// c mod d in [0, d) for any sign of c.
inline Int hash_grid_wrap(const Int& c, const Int& d) { return (c % d + d) % d; }
/// w0 + i mod d for w0 in [0, d) and i in [0, d): one compare, no division.
inline Int hash_grid_step(const Int& w0, const Int& i, const Int& d) {
  Int w = w0 + i;
  return where(w >= d, w - d, w);
}
/// The box of cells [p - radius, p + radius] touches, per axis: its first cell wrapped into the
/// grid and how many cells to visit (at most dim: more would visit wrapped cells twice).
struct HashGridBox {
  Int w0[3], n[3];
};
inline HashGridBox hash_grid_box(const Value<HashGrid>& grid, const Value<vec3f>& p, const Float& r) {
  Float inv = grid.cell_width_inv();
  Int dims[3] = {grid.dim_x(), grid.dim_y(), grid.dim_z()};
  Float c[3] = {p.x(), p.y(), p.z()};
  auto lo = [&](int a) { return hash_grid_coord((c[a] - r) * inv); };
  auto count = [&](int a, const Int& first) { return min(hash_grid_coord((c[a] + r) * inv) - first + 1, dims[a]); };
  Int l0 = lo(0), l1 = lo(1), l2 = lo(2);
  return HashGridBox{{hash_grid_wrap(l0, dims[0]), hash_grid_wrap(l1, dims[1]), hash_grid_wrap(l2, dims[2])},
                     {count(0, l0), count(1, l1), count(2, l2)}};
}
}  // namespace detail

/// The state of one neighbour query: the box of cells to visit (its first cell, wrapped, and
/// its extent), the position of the next cell in it, and the range of the current cell still to
/// visit. Its Vars are the state, so it is not copied: `auto q = hash_grid_query(...)` makes it
/// in place.
class HashGridQuery {
 public:
  /// A query of the points in the cells that the box [p - radius, p + radius] touches.
  HashGridQuery(const Value<HashGrid>& grid, const Value<vec3f>& p, Operand<float> radius)
      : HashGridQuery(grid, detail::hash_grid_box(grid, p, Float(detail::BoundTag{}, radius.id)), radius.loc) {}
  HashGridQuery(const HashGridQuery&) = delete;
  HashGridQuery& operator=(const HashGridQuery&) = delete;

 private:
  HashGridQuery(const Value<HashGrid>& grid, const detail::HashGridBox& b, Loc loc)
      : grid_(grid), box_(b), ix(0, loc), iy(0, loc), iz(0, loc), k(0, loc), k_end(0, loc) {}
  friend Bool hash_grid_query_next(HashGridQuery&, Var<int32_t>&);
  Value<HashGrid> grid_;
  detail::HashGridBox box_;
  Var<int32_t> ix, iy, iz, k, k_end;
};

/// Starts a query of the points in the cells that the box [p - radius, p + radius] touches
/// (Warp's hash_grid_query); iterate it with hash_grid_query_next.
inline HashGridQuery hash_grid_query(const Value<HashGrid>& grid, const Value<vec3f>& p, Operand<float> radius) {
  return HashGridQuery(grid, p, radius);
}

/// Sets `index` to the next point of the query and returns true, or returns false when every
/// cell of the box has been visited. Use it as a While condition.
inline Bool hash_grid_query_next(HashGridQuery& q, Var<int32_t>& index) {
  const Value<HashGrid>& g = q.grid_;
  const detail::HashGridBox& b = q.box_;
  // Skip to the next cell with points left to visit; x varies fastest, then y, then z.
  While([&] { return q.k >= q.k_end && q.iz < b.n[2]; }, [&] {
    Int x = detail::hash_grid_step(b.w0[0], q.ix, g.dim_x()), y = detail::hash_grid_step(b.w0[1], q.iy, g.dim_y());
    Int z = detail::hash_grid_step(b.w0[2], q.iz, g.dim_z());
    Int cell = (z * g.dim_y() + y) * g.dim_x() + x;
    q.k = g.cell_starts()[cell];
    q.k_end = g.cell_ends()[cell];
    Bool row_done = q.ix + 1 >= b.n[0];
    Bool plane_done = row_done && q.iy + 1 >= b.n[1];
    q.ix = where(row_done, Int(0), q.ix + 1);
    q.iy = where(plane_done, Int(0), where(row_done, q.iy + 1, Int(q.iy)));
    q.iz = where(plane_done, q.iz + 1, Int(q.iz));
  });
  Bool found = q.k < q.k_end;
  If(found, [&] {
    index = g.point_ids()[q.k];
    q.k = q.k + 1;
  });
  return found;
}

/// Runs body(j) for every point j of the cells that the box [p - radius, p + radius] touches,
/// the same points as a hash_grid_query loop, as nested For loops: the idiom for kernels that
/// need an adjoint (a While whose condition advances a query changes state in its condition,
/// which the adjoint refuses).
template <class Body>
void hash_grid_query_for(const Value<HashGrid>& grid, const Value<vec3f>& p, Operand<float> radius, Body&& body) {
  detail::HashGridBox b = detail::hash_grid_box(grid, p, Float(detail::BoundTag{}, radius.id));
  For(0, b.n[2], [&](Int k) {
    Int z = detail::hash_grid_step(b.w0[2], k, grid.dim_z());
    For(0, b.n[1], [&](Int j) {
      Int y = detail::hash_grid_step(b.w0[1], j, grid.dim_y());
      For(0, b.n[0], [&](Int i) {
        Int cell = (z * grid.dim_y() + y) * grid.dim_x() + detail::hash_grid_step(b.w0[0], i, grid.dim_x());
        For(grid.cell_starts()[cell], grid.cell_ends()[cell], [&](Int m) { body(grid.point_ids()[m]); });
      });
    });
  });
}

/// The index of the point at position i of the cell-sorted order (Warp's hash_grid_point_id):
/// threads that take their point from it visit neighbouring points one after another.
inline Int hash_grid_point_id(const Value<HashGrid>& grid, Operand<int32_t> i) {
  return grid.point_ids()[Int(detail::BoundTag{}, i.id)];
}

}  // namespace kjit::dsl

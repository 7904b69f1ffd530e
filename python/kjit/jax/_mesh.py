"""kjit.jax.mesh: a triangle mesh as kernels taking a ``kjit::dsl::Mesh`` read it from JAX — a
dict of its fields, whose BVH kjit's host builder makes through the ``kjit_mesh_bvh`` FFI
target. The build picks a tree (discrete): no gradient flows into it, so the gradient of a
kernel's result with respect to the points is what the kernel's reads of them give."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import _library


def bvh_sizes(faces: int) -> tuple[int, int]:
    """Rows of bvh_bounds and entries of bvh_nodes for a mesh of ``faces`` triangles: the node
    capacity C = 2 faces - 1 (the most nodes a binary tree over them has) gives (2 C, 2 C + faces)."""
    capacity = 2 * faces - 1
    return 2 * capacity, 2 * capacity + faces


def mesh(points: Any, indices: Any, velocities: Any = None) -> dict[str, Any]:
    """The ``kjit::dsl::Mesh`` of triangles ``indices`` (int32, 3 F entries: face f is points
    indices[3f], [3f + 1], [3f + 2]) over ``points`` (float32, (P, 3)), with optional per-point
    ``velocities`` (float32, (P, 3); absent: an empty array), as the dict a kernel's Mesh
    parameter takes: points, indices, velocities, bvh_bounds ((2 C, 3) float32), bvh_nodes
    ((2 C + F,) int32), C = 2 F - 1, bvh_winding (empty: the winding-number queries refuse
    this mesh, their launch failing with the error C++ gives a mesh built without that support)
    and bvh_rays (empty: mesh_query_ray walks the binary tree, with the same results). The BVH is built on the host (on a GPU: copied there and
    back, synchronizing the stream) with kjit::Mesh's builder, at every call: under jit, once per
    execution. Works under jit and vmap (one build per batch item); differentiable in points
    and velocities through the kernels that read them (the tree itself has no gradient)."""
    points = jnp.asarray(points)
    indices = jnp.asarray(indices)
    if points.dtype != jnp.float32 or points.ndim != 2 or points.shape[1] != 3:
        raise TypeError(f"kjit.jax.mesh: points must be float32 of shape (P, 3), got {points.dtype} {points.shape}")
    if indices.dtype != jnp.int32 or indices.ndim != 1:
        raise TypeError(f"kjit.jax.mesh: indices must be a 1-D int32 array, got {indices.dtype} {indices.shape}")
    if indices.shape[0] == 0 or indices.shape[0] % 3:
        raise ValueError(f"kjit.jax.mesh: indices has {indices.shape[0]} entries; a mesh needs three per triangle "
                         "and at least one triangle")
    if velocities is None:
        velocities = jnp.zeros((0, 3), jnp.float32)
    else:
        velocities = jnp.asarray(velocities)
        if velocities.dtype != jnp.float32 or velocities.shape != points.shape:
            raise TypeError(f"kjit.jax.mesh: velocities must be float32 of the points' shape {points.shape}, got "
                            f"{velocities.dtype} {velocities.shape}")
    _library.lib()  # the BVH target is registered with the first kernel library
    rows, entries = bvh_sizes(indices.shape[0] // 3)
    build = jax.ffi.ffi_call(_library.MESH_BVH_TARGET, (jax.ShapeDtypeStruct((rows, 3), np.float32),
                                                        jax.ShapeDtypeStruct((entries,), np.int32)),
                             vmap_method="sequential")
    bounds, nodes = build(jax.lax.stop_gradient(points), indices)
    return {"points": points, "indices": indices, "velocities": velocities, "bvh_bounds": bounds, "bvh_nodes": nodes,
            "bvh_winding": jnp.zeros((0, 3), jnp.float32), "bvh_rays": jnp.zeros((0,), jnp.int32)}

// kjit/codegen/codegen.hpp — IR to one C++ text that compiles with NVRTC and the host
// compiler: the prelude a module needs, and forward (and adjoint) entry points per kernel.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// Version of the generated text's shape. Bump it with any change to what codegen emits
/// for the same IR (the golden tests record it). Keys do not rely on the bump: they also
/// carry codegen_sources_hash(), which changes with any change to codegen's sources.
constexpr int kCodegenVersion = 45;  // 9: value_t parameters, value sums, the dual and noise_tangent chunks;
                                     // 10: adjoint lane functions; 11: both; 12: privatized adds
                                     // (kj::array_add) and block stores; 13: long adjoints in spans;
                                     // 14: a kernel's spans swept in functions of their own;
                                     // 15: wide forward lane functions, fused tangent products (kj::fma);
                                     // 16: checkpoints due by a mask, lane state copied as bytes;
                                     // 17: adjoint lane functions without PRE and sinking (GCC);
                                     // 18: Warp's random, noise, quat_rpy and special-value rules in the prelude;
                                     // 19: arrays in struct fields (kj::grad_view), 32-bit launch coordinates,
                                     // Warp's argmin/argmax/trace/3x3 determinant; 20: int32 quotient and
                                     // remainder through float64 on the cpu, 2-D launch coordinates in one division;
                                     // 21: an exchange whose result nothing reads as kj::atomic_exch_unread;
                                     // 22: kj::own_add (atomic where a CUDA launch shares the adjoint's memory);
                                     // 23: Warp's inverses, 4x4 determinant, matrix products (fused),
                                     // dot, quaternion normalize/matrix/slerp/rpy formulas; 24: the geometry
                                     // chunks (intersect.h: edge_edge, tri_tri; mesh.h: BVH traversals);
                                     // 25: mesh.h's stack bound follows the SAH builder's depth bound;
                                     // 26: the scalar adjoint reverses no loop or branch without reverse
                                     // work (ReverseWork, the lane function's rule);
                                     // 27: mesh.h's closest point rounded as Warp's (reciprocal, then products);
                                     // 28: the reverse transform's ops (KJIT_REVERSE_IR=1: loop-free adjoints
                                     // by the reverse transform, printed by the forward printer);
                                     // 29: the mesh ray queries' watertight test (mesh.h: kj::ray_triangle_woop);
                                     // 30: a value type's scalars read as an array through kj::copy_bytes;
                                     // 31: the reverse transform on by default; 32: mesh_query_point_sign_normal
                                     // in one traversal (kj::mesh_closest_sign_normal), the watertight test's
                                     // ray set up once a ray (kj::WoopRay);
                                     // 33: grad(f) in forward code (IR GradFunc: grad_<f>, device function
                                     // adjoints without kernel adjoints); 34: mesh.h's face closest point
                                     // in one place (kj::mesh_face_closest); 35: the reverse transform
                                     // takes branches (a branch's values kept in variables for the sweep);
                                     // 36: the mesh's ray tree (mesh_first_hit takes bvh_rays); 37: the
                                     // reverse transform takes loops (Checkpoint, ReverseSegments); 38: it
                                     // takes struct fields, print() of values, atomic min/max (CallAdjoint);
                                     // 39: and device functions' own adjoints (adj_<f>)
                                     // 40: the ray tree's blocks (a node's children side by side, prefetched whole)
                                     // 41: the ray tree's node test on eight lanes; forward lane functions
                                     // call mesh_first_hit_lanes (interleaved walks) for all their lanes
                                     // 42: the adjoint lane function's block adds (kj::add_block), an adjoint
                                     // known to hold +0 copying (not adding) another adjoint
                                     // 43: the first-hit walks' start in one prelude function (ray_root_enter)
                                     // 44: the ray tree's leaves as rows of lanes, tested four faces at once;
                                     // the first-hit walks in their own chunk (mesh_rays)
                                     // 45: the reverse transform takes arrays struct fields hold (GradView)

/// SHA-256 (hex) of codegen's sources and the IR's op and builtin tables (ops.def,
/// builtins.def, ...), computed when kjit was built. Part of every module identity, so that a
/// change to anything that generates code changes every key, with or without a version bump.
std::string_view codegen_sources_hash();

/// The entry points each kernel has.
enum class EntryKind { Forward, Adjoint };

/// The `extern "C"` name of a kernel's entry point: derived from the qualified kernel name
/// only, so it is the same in every process ("demo::springs" -> "kjit_demo__springs_fwd").
std::string entry_name(const std::string& kernel_name, EntryKind kind);

/// What to generate.
struct CodegenOptions {
  bool enable_adjoint = true;   ///< also emit the adjoint entry point of every kernel
  bool line_directives = true;  ///< #line directives back to the user's source
  int loop_checkpoints = 64;    ///< adjoint: checkpoint slots per dynamic loop
  bool bounds_check = false;    ///< check every element, component and integer division (DSL.md)
  /// adjoint: a body of at least twice this many statements is swept back in spans of about
  /// this many, each run forward again from a checkpoint (0: never; ModuleOptions::adjoint_span)
  int adjoint_span = 256;
  bool lane_functions = true;   ///< cpu lane functions where a kernel has loops or branches (ModuleOptions::cpu_lanes)
  /// adjoint: build the adjoints the reverse transform covers as IR (else the adjoint emitter
  /// writes every one). KJIT_REVERSE_IR=0 in the environment turns it off, for the differential
  /// test of the two.
  bool reverse_transform = true;

  /// The options' part of the module identity.
  std::string fingerprint() const;
};

/// One generated line that comes from a user's source line.
struct SourceMapping {
  int generated_line = 0;  ///< 1-based line in GeneratedModule::text
  ir::SourceLoc loc;
};

/// A generated module.
struct GeneratedModule {
  std::string text;                       ///< the whole translation unit
  std::vector<std::string> entry_points;  ///< every extern "C" entry it defines
  nlohmann::json kernels = nlohmann::json::array();  ///< per kernel: name, params, entries
  std::vector<SourceMapping> source_map;  ///< generated lines traced to user lines
};

/// Generates the module `module_name` holding `kernels` (traced, verified IR).
GeneratedModule generate_module(const std::string& module_name,
                                const std::vector<const ir::Function*>& kernels,
                                const CodegenOptions& options);

/// What determines the generated text, without generating it: the codegen version, the hash
/// of codegen's sources, a hash of the prelude, the options and the serialised IR of each
/// kernel. Module keys hash this,
/// so a cache hit needs no code generation.
std::string module_identity(const std::string& module_name,
                            const std::vector<const ir::Function*>& kernels,
                            const CodegenOptions& options);

/// The kernel description stored in meta.json and used by the runtime and the FFI:
/// name, parameters (name, type, ndim, element), launch dimensionality, entry names, and
/// the dynamic shared memory of each entry point ({"forward": bytes, "adjoint": bytes}), and
/// the array parameters each entry point only adds into ({"forward": [{"param": i, "adds": n},
/// ...], "adjoint": [...]}: entry parameter positions, the adjoint's after the kernel's), which
/// the cpu runtime may privatize.
nlohmann::json describe_kernel(const ir::Function& fn, bool with_adjoint);

/// The entry points generate_module defines for `kernels`, in its order (cheap: no text, no
/// descriptions).
std::vector<std::string> entry_points(const std::vector<const ir::Function*>& kernels,
                                      const CodegenOptions& options);

/// The descriptions of a module's kernels exactly as generate_module reports them
/// (GeneratedModule::kernels), including why a kernel has no adjoint ("adjoint_error") and
/// the status code and location of each checkpointed adjoint loop ("loops"); computed
/// without generating any text.
nlohmann::json describe_module(const std::vector<const ir::Function*>& kernels,
                               const CodegenOptions& options);

}  // namespace kjit::codegen

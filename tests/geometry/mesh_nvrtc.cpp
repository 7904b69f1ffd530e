// The mesh module (traversal prelude chunk, query kernels and their adjoints) compiles with
// NVRTC for sm_80 and sm_90 (no GPU needed), and so does the module of the further queries.
#include <doctest/doctest.h>

#include "gpu_builds.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "mesh_kernels.hpp"
#include "mesh_query_kernels.hpp"

using namespace kjit;

TEST_CASE("the mesh query module compiles with NVRTC for sm_80 and sm_90, adjoints included") {
  (void)meshk::closest.def();  // registered with the module before it is assembled
  compiler::ModuleSource s = module_compile_input("geometry_mesh").source;
  size_t adjoints = 0;
  for (const std::string& e : s.entry_points) adjoints += e.size() > 4 && e.compare(e.size() - 4, 4, "_adj") == 0;
  CHECK(adjoints >= 2);
  const std::string text = s.text.empty() && s.generate ? s.generate() : s.text;
  CHECK(text.find("kj::mesh_closest_face") != std::string::npos);
  CHECK(text.find("kj::mesh_first_hit") != std::string::npos);
  test::check_builds_for_gpus(s, "geometry_mesh");
}

TEST_CASE("the signed / furthest point, ray count and box / ray loop module compiles with NVRTC for sm_80 and sm_90, adjoints included") {
  (void)meshq::point_queries.def();
  compiler::ModuleSource s = module_compile_input("geometry_mesh_queries").source;
  size_t adjoints = 0;
  for (const std::string& e : s.entry_points) adjoints += e.size() > 4 && e.compare(e.size() - 4, 4, "_adj") == 0;
  CHECK(adjoints >= 2);
  const std::string text = s.text.empty() && s.generate ? s.generate() : s.text;
  for (const char* f : {"kj::mesh_sign_rays", "kj::mesh_closest_sign_normal", "kj::mesh_sign_parity", "kj::mesh_furthest_face",
                        "kj::mesh_ray_count", "kj::mesh_ray_any", "kj::bvh_next_leaf_box", "kj::bvh_next_leaf_ray"}) {
    CAPTURE(f);
    CHECK(text.find(f) != std::string::npos);
  }
  test::check_builds_for_gpus(s, "geometry_mesh_queries");
}

// On cuda:0: a kjit::Mesh over cuda arrays (built on the host, its nodes copied back) answers
// closest-point and ray queries as the cpu's mesh does — the binary walk of a small mesh and
// the ray tree of one past KJIT_MESH_RAY_TREE_MIN_FACES — face for face but at ties, with
// distances and hit parameters within FMA contraction's rounding.
#include <random>

#include "../geometry/mesh_kernels.hpp"  // the geometry suite's query kernels
#include "gpu_support.hpp"
#include "kjit/runtime/mesh.hpp"


using namespace kjit;
using namespace kjit::gpu_test;

namespace {

/// A g x g height field over [-1, 1]^2 (bumps in [-0.2, 0.2]): 2 g^2 faces.
struct HeightField {
  std::vector<vec3f> points;
  std::vector<int32_t> indices;
  explicit HeightField(int g) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> h(-0.2f, 0.2f);
    for (int i = 0; i <= g; ++i)
      for (int j = 0; j <= g; ++j)
        points.push_back(vec3f(2.0f * float(i) / float(g) - 1.0f, 2.0f * float(j) / float(g) - 1.0f, h(rng)));
    for (int i = 0; i < g; ++i)
      for (int j = 0; j < g; ++j) {
        const int32_t a = i * (g + 1) + j, b = a + g + 1, c = a + 1, d = b + 1;
        indices.insert(indices.end(), {a, b, c, c, b, d});
      }
  }
};

struct Results {
  std::vector<int32_t> face;
  std::vector<double> values;  ///< (u, v, hit) per point, or (t, u, v) per ray
};

constexpr int kQueries = 20000;

Results query(const HeightField& field, const Device& d, bool rays) {
  Mesh mesh(from_vector(field.points, {int64_t(field.points.size())}, d),
            from_vector(field.indices, {int64_t(field.indices.size())}, d));
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.2f, 1.2f);
  std::vector<vec3f> a(kQueries), b(kQueries);
  for (int i = 0; i < kQueries; ++i) {
    a[size_t(i)] = vec3f(u(rng), u(rng), rays ? 2.0f : u(rng));
    b[size_t(i)] = vec3f(0.3f * u(rng), 0.3f * u(rng), -1.0f);  // a ray's direction, downwards
  }
  NdArray face = NdArray::zeros(ir_type_of<int32_t>(), {kQueries}, d);
  Results r;
  if (rays) {
    NdArray tuv = NdArray::zeros(ir_type_of<vec3f>(), {kQueries}, d);
    NdArray sign = NdArray::zeros(ir_type_of<float>(), {kQueries}, d);
    NdArray normal = NdArray::zeros(ir_type_of<vec3f>(), {kQueries}, d);
    launch(meshk::ray, kQueries, mesh, from_vector(a, {kQueries}, d), from_vector(b, {kQueries}, d), 10.0f, face,
           tuv, sign, normal);
    r.values = scalars_of(tuv);
  } else {
    NdArray uvr = NdArray::zeros(ir_type_of<vec3f>(), {kQueries}, d);
    launch(meshk::closest, kQueries, mesh, from_vector(a, {kQueries}, d), 10.0f, face, uvr);
    r.values = scalars_of(uvr);
  }
  Stream::default_for(d).synchronize();
  r.face = face.to_vector<int32_t>();
  return r;
}

/// Faces equal but at ties (at most 0.1 % of the queries: a point or a ray across an edge,
/// whose two faces an FMA's rounding can swap), the values of equal faces within 1e-4.
void check_same(const Results& gpu, const Results& cpu, size_t per_query) {
  size_t other_face = 0, far = 0, hits = 0;
  for (size_t i = 0; i < cpu.face.size(); ++i) {
    hits += cpu.face[i] >= 0;
    if (gpu.face[i] != cpu.face[i]) {
      ++other_face;
      continue;
    }
    for (size_t k = 0; k < per_query; ++k) {
      const double g = gpu.values[i * per_query + k], c = cpu.values[i * per_query + k];
      far += std::fabs(g - c) > 1e-4 * std::max(1.0, std::fabs(c));
    }
  }
  CHECK(hits > cpu.face.size() / 2);  // most queries meet the field
  CHECK(other_face <= cpu.face.size() / 1000);
  CHECK(far == 0);
}

}  // namespace

TEST_CASE("meshes on cuda:0: closest points and ray casts as on the cpu, binary walk and ray tree") {
  // 3,200 faces (the binary walk) and 145,152 (past the ray tree's 131,072).
  for (int g : {40, 270}) {
    CAPTURE(g);
    const HeightField field(g);
    for (bool rays : {false, true}) {
      CAPTURE(rays);
      check_same(query(field, Device::cuda(0), rays), query(field, Device::cpu(), rays), 3);
    }
  }
}

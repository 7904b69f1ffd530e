// kjit's random and noise builtins against Warp 1.19's on the same inputs: the kernels below
// are scripts/warp_random_reference.py's, line for line. Without Warp the check reads
// tests/builtins/golden/warp_streams.txt (what that script printed for 10^6 rows: a hash of
// each column's bits and its first rows); with KJIT_WARP_REFERENCE=DIR (scripts/warp_streams.sh)
// it compares every row of DIR's tables and reports each column's largest difference.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/tape.hpp"
#include "test_support.hpp"

namespace warp_streams {
using kjit::vec2f, kjit::vec3f, kjit::vec4f;
using namespace kjit::dsl;
KJIT_MODULE(builtins_warp_streams)

KJIT_KERNEL(integers, (Array<float> cdf, Array<uint32_t, 2> out)) {
  Int i = tid();
  out(i, 0) = rand_init(i);
  out(i, 1) = rand_init(12345, i);
  Var<UInt32> s = rand_init(i, Int(2));
  out(i, 2) = randu(s);
  out(i, 3) = randu(s, 5u, 1000u);
  s = rand_init(i, Int(3));
  out(i, 4) = UInt32(randi(s));
  out(i, 5) = UInt32(randi(s, -100, 100));
  s = rand_init(i, Int(4));
  out(i, 6) = poisson(s, Float(i % 300) * 0.1f);
  out(i, 7) = poisson(s, Float(i % 7) * 30.0f - 30.0f);  // negative, zero and large rates
  s = rand_init(i, Int(5));
  out(i, 8) = UInt32(sample_cdf(s, cdf));
  // One state through a chain of draws: the last value depends on how many each consumed.
  s = rand_init(i, Int(99));
  randn(s);
  sample_unit_sphere(s);
  poisson(s, 12.5f);
  sample_unit_disk(s);
  out(i, 9) = randu(s);
}

KJIT_KERNEL(floats, (Array<float, 2> out)) {
  Int i = tid();
  Var<UInt32> s = rand_init(i, Int(10));
  out(i, 0) = randf(s);
  out(i, 1) = randf(s, -2.0f, 6.0f);
  s = rand_init(i, Int(11));
  out(i, 2) = randn(s);
  out(i, 3) = randn(s);
  s = rand_init(i, Int(12));
  int c = 4;
  auto put = [&](auto v, int n) {
    for (int k = 0; k < n; ++k) out(i, c++) = v[k];
  };
  put(sample_triangle(s), 2);
  put(sample_unit_ring(s), 2);
  put(sample_unit_disk(s), 2);
  put(sample_unit_square(s), 2);
  s = rand_init(i, Int(13));
  put(sample_unit_sphere_surface(s), 3);
  put(sample_unit_sphere(s), 3);
  put(sample_unit_hemisphere_surface(s), 3);
  put(sample_unit_hemisphere(s), 3);
  put(sample_unit_cube(s), 3);
}

/// Coordinates in [-40, 40); every 97th row on lattice points (integer coordinates).
Vec4f noise_point(const Int& i) {
  Var<UInt32> s = rand_init(i, Int(777));
  Float a = randf(s, -40.0f, 40.0f), b = randf(s, -40.0f, 40.0f), c = randf(s, -40.0f, 40.0f), d = randf(s, -40.0f, 40.0f);
  Bool on_lattice = i % 97 == 0;
  return Vec4f(where(on_lattice, floor(a), a), where(on_lattice, floor(b), b), where(on_lattice, floor(c), c),
               where(on_lattice, floor(d), d));
}

KJIT_KERNEL(points, (Array<float> x1, Array<vec2f> x2, Array<vec3f> x3, Array<vec4f> x4)) {
  Int i = tid();
  Vec4f p = noise_point(i);
  x1[i] = p[0];
  x2[i] = Vec2f(p[0], p[1]);
  x3[i] = Vec3f(p[0], p[1], p[2]);
  x4[i] = p;
}

KJIT_KERNEL(noises, (Array<float> x1, Array<vec2f> x2, Array<vec3f> x3, Array<vec4f> x4, Array<float, 2> n,
                     Array<vec2f> c2, Array<vec3f> c3, Array<vec3f> c4)) {
  Int i = tid();
  UInt32 seed = rand_init(i);
  Int px = 1 + i % 7, py = 2 + i % 5, pz = 3 + i % 3, pt = 1 + i % 4;
  UInt32 octaves = UInt32(1 + i % 4);
  n(i, 0) = noise(seed, x1[i]);
  n(i, 1) = noise(seed, x2[i]);
  n(i, 2) = noise(seed, x3[i]);
  n(i, 3) = noise(seed, x4[i]);
  n(i, 4) = pnoise(seed, x1[i], px);
  n(i, 5) = pnoise(seed, x2[i], px, py);
  n(i, 6) = pnoise(seed, x3[i], px, py, pz);
  n(i, 7) = pnoise(seed, x4[i], px, py, pz, pt);
  c2[i] = curlnoise(seed, x2[i], octaves, 2.0f, 0.5f);
  c3[i] = curlnoise(seed, x3[i], octaves, 2.0f, 0.5f);
  c4[i] = curlnoise(seed, x4[i], octaves, 2.0f, 0.5f);
}
}  // namespace warp_streams

using namespace kjit;

namespace {

/// One table: rows x columns of 32-bit values (uint32 or float bits), as the script writes it.
struct Table {
  std::string name;
  bool is_float = true;
  int64_t columns = 0;
  std::vector<uint32_t> bits;
  uint32_t at(int64_t r, int64_t c) const { return bits[size_t(r * columns + c)]; }
};

/// An array's values as 32-bit words (T: its element type).
template <class T>
std::vector<uint32_t> bits_of(const NdArray& a) {
  std::vector<T> v = a.to_vector<T>();
  std::vector<uint32_t> out(v.size() * sizeof(T) / 4);
  std::memcpy(out.data(), v.data(), out.size() * 4);
  return out;
}

/// Interleaves per-row blocks of several tables into one (the script's np.concatenate(axis=1)).
std::vector<uint32_t> join_columns(const std::vector<std::vector<uint32_t>>& parts, int64_t rows) {
  std::vector<uint32_t> out;
  out.reserve(size_t(rows) * 32);
  for (int64_t r = 0; r < rows; ++r)
    for (const auto& p : parts) {
      size_t w = p.size() / size_t(rows);
      out.insert(out.end(), p.begin() + long(size_t(r) * w), p.begin() + long(size_t(r + 1) * w));
    }
  return out;
}

/// kjit's four tables for `rows` rows.
std::vector<Table> kjit_tables(int64_t rows) {
  using namespace warp_streams;
  std::vector<float> cdf(16);
  double acc = 0;
  for (int k = 0; k < 16; ++k) cdf[size_t(k)] = float(acc += (k + 1) / 136.0);
  cdf[15] = 1.0f;
  std::vector<Table> t(4);
  NdArray ints = zeros<uint32_t>({rows, 10});
  launch(integers, rows, from_vector(cdf), ints);
  t[0] = {"random_integers", false, 10, bits_of<uint32_t>(ints)};
  NdArray fl = zeros<float>({rows, 27});
  launch(floats, rows, fl);
  t[1] = {"random_floats", true, 27, bits_of<float>(fl)};

  NdArray x1 = zeros<float>({rows}).requires_grad(), x2 = zeros<vec2f>({rows}).requires_grad(),
          x3 = zeros<vec3f>({rows}).requires_grad(), x4 = zeros<vec4f>({rows}).requires_grad();
  launch(points, rows, x1, x2, x3, x4);
  NdArray n = zeros<float>({rows, 8}).requires_grad(), c2 = zeros<vec2f>({rows}).requires_grad(),
          c3 = zeros<vec3f>({rows}).requires_grad(), c4 = zeros<vec3f>({rows}).requires_grad();
  Tape tape;
  {
    auto on = tape.record();
    launch(noises, rows, x1, x2, x3, x4, n, c2, c3, c4);
  }
  t[2] = {"noise_values", true, 16, join_columns({bits_of<float>(n), bits_of<vec2f>(c2), bits_of<vec3f>(c3), bits_of<vec3f>(c4)}, rows)};
  auto gradients = [&](bool curls) {
    tape.zero();
    NdArray one_n = zeros<float>({rows, 8}), one_c2 = zeros<vec2f>({rows}), one_c3 = zeros<vec3f>({rows}), one_c4 = zeros<vec3f>({rows});
    if (curls) {
      one_c2.fill(vec2f{{1, 1}});
      one_c3.fill(vec3f{{1, 1, 1}});
      one_c4.fill(vec3f{{1, 1, 1}});
    } else {
      one_n.fill(1.0f);
    }
    tape.backward({{n, one_n}, {c2, one_c2}, {c3, one_c3}, {c4, one_c4}});
    return join_columns({bits_of<float>(x1.grad()), bits_of<vec2f>(x2.grad()), bits_of<vec3f>(x3.grad()), bits_of<vec4f>(x4.grad())}, rows);
  };
  std::vector<uint32_t> g0 = gradients(false), g1 = gradients(true);
  t[3] = {"noise_gradients", true, 20, join_columns({g0, g1}, rows)};
  return t;
}

/// FNV-1a over a column's values, row after row.
uint64_t column_hash(const Table& t, int64_t rows, int64_t c) {
  uint64_t h = 1469598103934665603ull;
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t v = t.at(r, c);
    for (int b = 0; b < 4; ++b) h = (h ^ ((v >> (8 * b)) & 0xffu)) * 1099511628211ull;
  }
  return h;
}

float as_float(uint32_t b) { float f; std::memcpy(&f, &b, 4); return f; }

/// How far kjit's column is from Warp's: rows whose bits differ, and the largest difference
/// relative to the column's largest magnitude (floats; NaN against non-NaN counts as 1).
struct Difference { int64_t differing = 0; double largest = 0; int64_t worst_row = -1; };
Difference compare_column(const Table& ours, const Table& theirs, int64_t rows, int64_t c) {
  Difference d;
  double scale = 0;
  if (ours.is_float)
    for (int64_t r = 0; r < rows; ++r) scale = std::max(scale, std::fabs(double(as_float(theirs.at(r, c)))));
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t a = ours.at(r, c), b = theirs.at(r, c);
    if (a == b) continue;
    double diff = 1;
    if (ours.is_float) {
      double x = as_float(a), y = as_float(b);
      if (x == y) continue;  // +0 and -0
      diff = std::isnan(x) != std::isnan(y) ? 1 : std::fabs(x - y) / (scale > 0 ? scale : 1);
    }
    ++d.differing;
    if (diff > d.largest) d.largest = diff, d.worst_row = r;
  }
  return d;
}

/// The largest difference allowed, relative to the column's largest magnitude: none (the same
/// bits) but for the curl-noise gradients (columns 10-19 of noise_gradients), where kjit takes
/// the noise Hessian from its own interpolation chain and Warp from closed forms.
double tolerance(const Table& t, int64_t column) { return t.name == "noise_gradients" && column >= 10 ? 1e-6 : 0.0; }

/// The golden file: "rows N", then per table "table NAME COLUMNS", per column "hash C H", and
/// "row R v0 v1 ..." (hex bits) for the first rows.
struct Golden {
  int64_t rows = 0;
  std::map<std::string, std::vector<uint64_t>> hashes;
  std::map<std::string, std::vector<std::vector<uint32_t>>> first_rows;
};
Golden read_golden(const std::string& path) {
  Golden g;
  std::ifstream f(path);
  REQUIRE_MESSAGE(f.good(), "cannot read " << path);
  std::string word, table;
  while (f >> word) {
    if (word == "rows") f >> g.rows;
    else if (word == "table") { int64_t cols; f >> table >> cols; }
    else if (word == "hash") { int64_t c; uint64_t h; f >> c >> std::hex >> h >> std::dec; g.hashes[table].push_back(h); }
    else if (word == "row") {
      std::string line;
      std::getline(f, line);
      std::istringstream in(line);
      int64_t r;
      in >> r;
      std::vector<uint32_t> v;
      for (uint32_t x; in >> std::hex >> x;) v.push_back(x);
      g.first_rows[table].push_back(v);
    }
  }
  return g;
}

const char* kGolden = KJIT_SOURCE_DIR "/tests/builtins/golden/warp_streams.txt";

}  // namespace

TEST_CASE("random and noise builtins give Warp 1.19's values for 10^6 seeds and points") {
  if (const char* dir = std::getenv("KJIT_WARP_REFERENCE")) {
    // Side by side (scripts/warp_streams.sh): every row, every column; the golden file is
    // rewritten from Warp's tables when KJIT_UPDATE_GOLDEN is set.
    std::ifstream probe(std::string(dir) + "/random_integers.bin", std::ios::binary | std::ios::ate);
    REQUIRE(probe.good());
    const int64_t rows = int64_t(probe.tellg()) / 40;
    std::vector<Table> ours = kjit_tables(rows);
    std::ofstream golden;
    if (std::getenv("KJIT_UPDATE_GOLDEN")) golden.open(kGolden), golden << "rows " << rows << "\n";
    for (const Table& t : ours) {
      Table theirs = t;
      std::ifstream f(std::string(dir) + "/" + t.name + ".bin", std::ios::binary);
      REQUIRE(f.read(reinterpret_cast<char*>(theirs.bits.data()), std::streamsize(theirs.bits.size() * 4)));
      if (golden.is_open()) {
        golden << "table " << t.name << " " << t.columns << "\n";
        for (int64_t c = 0; c < t.columns; ++c) golden << "hash " << c << " " << std::hex << column_hash(theirs, rows, c) << std::dec << "\n";
        for (int64_t r = 0; r < 64; ++r) {
          golden << "row " << r << std::hex;
          for (int64_t c = 0; c < t.columns; ++c) golden << " " << theirs.at(r, c);
          golden << std::dec << "\n";
        }
      }
      for (int64_t c = 0; c < t.columns; ++c) {
        Difference d = compare_column(t, theirs, rows, c);
        MESSAGE(t.name << " column " << c << ": " << d.differing << " of " << rows << " rows differ, largest "
                       << d.largest << (d.worst_row >= 0 ? " at row " + std::to_string(d.worst_row) : ""));
        if (tolerance(t, c) == 0) CHECK(d.differing == 0);
        CHECK(d.largest <= tolerance(t, c));
      }
    }
    return;
  }
  Golden g = read_golden(kGolden);
  REQUIRE(g.rows > 0);
  std::vector<Table> ours = kjit_tables(g.rows);
  for (const Table& t : ours) {
    INFO(t.name);
    REQUIRE(g.hashes[t.name].size() == size_t(t.columns));
    for (int64_t c = 0; c < t.columns; ++c) {
      INFO("column " << c);
      const auto& warp_rows = g.first_rows[t.name];
      float scale = 0;
      for (const auto& row : warp_rows) scale = std::max(scale, std::fabs(as_float(row[size_t(c)])));
      for (size_t r = 0; r < warp_rows.size(); ++r) {
        INFO("row " << r);
        uint32_t ours_bits = t.at(int64_t(r), c), warp_bits = warp_rows[r][size_t(c)];
        if (tolerance(t, c) == 0) CHECK(ours_bits == warp_bits);
        else CHECK(std::fabs(as_float(ours_bits) - as_float(warp_bits)) <= tolerance(t, c) * scale);
      }
      // Every row: the same bits give the same hash (the tolerated columns' rows are checked
      // in full by scripts/warp_streams.sh).
      if (tolerance(t, c) == 0) CHECK(column_hash(t, g.rows, c) == g.hashes[t.name][size_t(c)]);
    }
  }
}

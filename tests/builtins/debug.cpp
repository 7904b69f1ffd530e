// Debugging aids on the cpu device: print (values of any type, and their adjoints in the
// reverse sweep), printf, the device-side check expect_near (the failing thread prints its
// index, the location and the values; the launch throws), block_dim and breakpoint.
#include <doctest/doctest.h>

#include "debug_kernels.hpp"
#include "kjit/kjit.hpp"
#include "test_support.hpp"

namespace checks {
using namespace kjit::dsl;
KJIT_KERNEL(near_vec, (Array<Vec3d> x)) { expect_near(x[tid()], Vec3d(1.0, 2.0, 3.0)); }
KJIT_KERNEL(blocks, (Array<int32_t> out)) { out[tid()] = block_dim(); }
KJIT_KERNEL(trap, (Array<float> x)) {
  If(x[tid()] > 1e30f, [&] { breakpoint(); });  // compiled, never reached here
  x[tid()] = x[tid()] + 1.0f;
}
}  // namespace checks

using namespace kjit;

using test::capture_stdout;

TEST_CASE("print and printf in kernels write from the thread, forward; print's adjoint prints adjoints") {
  std::vector<vec3d> x{vec3d{{1, 2, 3}}, vec3d{{4, 5, 6}}};
  NdArray out = zeros<double>({2});
  std::string text = capture_stdout([&] { launch(debugging::prints, 2, from_vector(x), out); });
  debugging::check_prints_forward(text);
  std::string reverse = capture_stdout([&] {
    launch_adjoint(debugging::prints, 2, {from_vector(x), out}, {zeros<vec3d>({2}), from_vector(std::vector<double>{1, 1})});
  });
  debugging::check_prints_adjoint(reverse);
}

TEST_CASE("expect_near: passing checks are silent; a failing one names the thread, the line and the values") {
  std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f}, y{1.0f, 2.0005f, 3.5f, 4.0f};
  std::string ok = capture_stdout([&] { launch(checks::near, 2, from_vector(x), from_vector(y)); });
  CHECK(ok.empty());
  std::string text;
  bool threw = false;
  text = capture_stdout([&] {
    try {
      launch(checks::near, 4, from_vector(x), from_vector(y));
    } catch (const Error& e) {
      threw = true;
      CHECK(e.kind() == ErrorKind::User);
      CHECK(std::string(e.what()).find("expect_near") != std::string::npos);
    }
  });
  CHECK(threw);
  CHECK(text.find("thread 2") != std::string::npos);
  CHECK(text.find("debug_kernels.hpp:" + std::to_string(checks::kNearLine)) != std::string::npos);
  CHECK(text.find("3 vs 3.5") != std::string::npos);
  // The status word was cleared: the next passing launch does not throw.
  CHECK_NOTHROW(launch(checks::near, 2, from_vector(x), from_vector(y)));
  std::vector<vec3d> v{vec3d{{1, 2, 3}}, vec3d{{1, 2, 3.1}}};
  CHECK_THROWS_AS(capture_stdout([&] { launch(checks::near_vec, 2, from_vector(v)); }), Error);
}

TEST_CASE("block_dim is 1 on the cpu; breakpoint compiles (and is not reached)") {
  NdArray out = zeros<int32_t>({3});
  launch(checks::blocks, 3, out);
  CHECK(out.to_vector<int32_t>() == std::vector<int32_t>{1, 1, 1});
  NdArray x = from_vector(std::vector<float>{1, 2});
  launch(checks::trap, 2, x);
  CHECK(x.to_vector<float>()[1] == 3.0f);
}

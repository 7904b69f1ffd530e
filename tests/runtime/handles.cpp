// The light handles of <kjit/kjit.hpp>: kjit::Error's shared message and the counted owner of
// array memory and streams (detail::SharedResource), which replaced std::runtime_error and
// std::shared_ptr to keep <string> and <memory> out of programs' headers.
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kjit/kjit.hpp"

using namespace kjit;

TEST_CASE("kjit::Error keeps its kind and message through copies, from any string type") {
  const std::string text = std::string("launch of kernel 'k': ") + std::string(3, 'x');
  Error a(ErrorKind::User, text);
  CHECK(std::string(a.what()) == "launch of kernel 'k': xxx");
  CHECK(a.kind() == ErrorKind::User);
  Error b = a;  // copies share the message
  CHECK(b.what() == a.what());
  Error c(ErrorKind::Driver, "no CUDA driver");
  c = b;
  CHECK(c.kind() == ErrorKind::User);
  CHECK(std::string(c.what()) == text);
  CHECK(std::string(Error(ErrorKind::Cache, std::string_view("abcdef").substr(1, 3)).what()) == "bcd");
  CHECK(std::string(Error(ErrorKind::Internal, "with\0nul", 8).what()) == "with");  // length kept, text C-terminated
  CHECK(std::string(Error(ErrorKind::User, static_cast<const char*>(nullptr)).what()).empty());
  try {
    throw Error(ErrorKind::Compile, std::string("thrown ") + "and caught");
  } catch (const std::exception& e) {  // a std::exception, as before
    CHECK(std::string(e.what()) == "thrown and caught");
  }
}

namespace {
std::atomic<int> g_released{0};
void count_release(void*, const Device&) { ++g_released; }
}  // namespace

TEST_CASE("SharedResource releases once, with the last copy, also across threads") {
  g_released = 0;
  int resource = 0;
  {
    detail::SharedResource a(&resource, Device::cpu(), &count_release);
    CHECK(a.use_count() == 1);
    detail::SharedResource b = a;
    detail::SharedResource c;
    c = b;
    CHECK(a.use_count() == 3);
    detail::SharedResource d = std::move(c);
    CHECK(!c);
    CHECK(a.use_count() == 3);
    b.reset();
    CHECK(a.use_count() == 2);
    a = a;  // self-assignment keeps the share
    CHECK(a.use_count() == 2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < 10000; ++i) detail::SharedResource copy = d;
      });
    for (std::thread& t : threads) t.join();
    CHECK(a.use_count() == 2);
    CHECK(g_released == 0);
  }
  CHECK(g_released == 1);
}

TEST_CASE("array copies share memory and the last one frees it") {
  NdArray a = from_vector(std::vector<float>{1, 2, 3});
  NdArray b = a;
  b.requires_grad();  // the memory's buffer: a, copied before, sees it too
  CHECK(b.data() == a.data());
  CHECK(b.has_grad());
  CHECK(a.has_grad());
  CHECK(a.grad().data() == b.grad().data());
  NdArray g = b.grad();
  a = NdArray();
  b = NdArray();
  // The gradient handle keeps the gradient buffer alive alone.
  CHECK(g.to_vector<float>() == std::vector<float>{0, 0, 0});
}

// Warp's arrays own one gradient: a handle copied or viewed before requires_grad() (a struct
// field, a kjit::Mesh's points) must find it, at its own offset, or an adjoint adds nowhere.
TEST_CASE("a gradient buffer belongs to the memory: copies and views made before requires_grad() see it") {
  NdArray a = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6});
  NdArray early_copy = a, early_view = a.slice(2, 5), matrix = a.reshape({2, 3}), column = a.reshape({2, 3}).transpose();
  CHECK_FALSE(early_copy.has_grad());
  a.requires_grad();
  REQUIRE(early_copy.has_grad());
  REQUIRE(early_view.has_grad());
  CHECK(early_copy.grad().data() == a.grad().data());
  CHECK(static_cast<char*>(early_view.grad().data()) == static_cast<char*>(a.grad().data()) + 2 * sizeof(float));
  // Writing through one handle's gradient is seen through every other, at the same elements.
  early_view.grad().copy_from(from_vector(std::vector<float>{10, 20, 30}));
  CHECK(a.grad().to_vector<float>() == std::vector<float>{0, 0, 10, 20, 30, 0});
  CHECK(matrix.grad().to_vector<float>() == std::vector<float>{0, 0, 10, 20, 30, 0});
  CHECK(column.grad().copy().to_vector<float>() == std::vector<float>{0, 20, 0, 30, 10, 0});  // transposed
  // A view zeroes its own elements only; requires_grad() again changes nothing.
  early_view.slice(0, 1).zero_grad();
  a.requires_grad();
  CHECK(a.grad().to_vector<float>() == std::vector<float>{0, 0, 0, 20, 30, 0});
  column.zero_grad();  // strided: element by element
  CHECK(a.grad().to_vector<float>() == std::vector<float>{0, 0, 0, 0, 0, 0});
  // A copy made after is the same array too; a new array (copy()) is not.
  CHECK((NdArray(a).has_grad() && !a.copy().has_grad()));
}

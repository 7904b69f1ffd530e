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
  b.requires_grad();  // b gets a gradient buffer; a keeps none (a handle, not the memory)
  CHECK(b.data() == a.data());
  CHECK(b.has_grad());
  CHECK_FALSE(a.has_grad());
  NdArray g = b.grad();
  a = NdArray();
  b = NdArray();
  // The gradient handle keeps the gradient buffer alive alone.
  CHECK(g.to_vector<float>() == std::vector<float>{0, 0, 0});
}

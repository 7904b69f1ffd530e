// `kjit devices` and precompiling for this machine's GPUs, on the recording fake driver (two
// devices, sm_80 and sm_90) and with no driver at all.
#include <doctest/doctest.h>

#include "cli_fixtures.hpp"

using namespace kjit::test;
using namespace kjit::test::cli;

namespace {
std::string fake(const std::string& devices = "8.0,9.0") {
  return "KJIT_CUDA_DRIVER=" + kFakeDriver + " KJIT_FAKE_CUDA_DEVICES=" + devices;
}
}  // namespace

TEST_CASE("devices lists each GPU with its architecture and target") {
  Run r = run_kjit("devices --json", fake("8.0,9.0"));
  REQUIRE(r.status == 0);
  nlohmann::json j = r.json();
  CHECK(j["available"] == true);
  CHECK(j["reason"].is_null());
  CHECK(j["driver"] == kFakeDriver);
  REQUIRE(j["devices"].size() == 2);
  CHECK(j["devices"][0]["device"] == "cuda:0");
  CHECK(j["devices"][0]["compute_capability"] == "8.0");
  CHECK(j["devices"][0]["target"] == "sm_80");
  CHECK(j["devices"][1]["target"] == "sm_90");
  CHECK(j["devices"][1]["name"].get<std::string>().find("Fake CUDA Device 1") == 0);

  Run human = run_kjit("devices", fake("8.0,9.0"));
  REQUIRE(human.status == 0);
  // First which NVRTC builds GPU targets, then the driver.
  CHECK(human.out.find("NVRTC ") == 0);
  CHECK(human.out.find("\nCUDA driver 13.0 (" + kFakeDriver + ")") != std::string::npos);
  CHECK(j["nvrtc"]["available"] == true);
  CHECK(human.out.find("(" + j["nvrtc"]["origin"].get<std::string>() + ": " + j["nvrtc"]["path"].get<std::string>() +
                       ")\n") != std::string::npos);
  CHECK(human.out.find("cuda:1  Fake CUDA Device 1 (sm_90)  9.0") != std::string::npos);
}

TEST_CASE("devices without a driver says why, and that the cpu and --arch still work") {
  Run r = run_kjit("devices", "KJIT_CUDA_DRIVER=none");
  CHECK(r.status == 0);
  CHECK(r.out.find("\nno usable GPU: ") != std::string::npos);
  CHECK(r.out.find("--arch sm_80,sm_90") != std::string::npos);
  Run j = run_kjit("devices --json", "KJIT_CUDA_DRIVER=none");
  CHECK(j.json()["available"] == false);
  CHECK(!j.json()["reason"].get<std::string>().empty());
  CHECK(j.json()["devices"].empty());
}

TEST_CASE("--all-devices builds for every GPU, --current-device for cuda:0, --ptx turns them into PTX") {
  const ExampleCache& cache = example_cache();  // sm_80 and sm_90 are cached there
  REQUIRE(cache.first.status == 0);
  Run all = run_kjit("precompile " + kDemoLibrary + " --all-devices --json --cache-dir " + cache.dir, fake("8.0,9.0"));
  REQUIRE(all.status == 0);
  // Kept in a variable: a range-for over all.json()["modules"] iterates a destroyed temporary.
  const nlohmann::json all_json = all.json();
  for (const auto& m : all_json["modules"]) {
    REQUIRE(m["targets"].size() == 2);
    CHECK(m["targets"][0]["target"] == "sm_80");
    CHECK(m["targets"][1]["target"] == "sm_90");
    CHECK(m["targets"][0]["status"] == "cached");
    CHECK(m["targets"][1]["status"] == "cached");
  }
  Run current = run_kjit("precompile " + kDemoLibrary + " --current-device --module saxpy --json --cache-dir " + cache.dir,
                     fake("9.0,8.0"));
  REQUIRE(current.status == 0);
  REQUIRE(current.json()["modules"][0]["targets"].size() == 1);
  CHECK(current.json()["modules"][0]["targets"][0]["target"] == "sm_90");
  CHECK(current.json()["modules"][0]["targets"][0]["status"] == "cached");

  // Targets are a union without duplicates; --ptx maps sm_XX to compute_XX (a separate build).
  TempDir dir("cli-ptx");
  Run ptx = run_kjit("precompile " + kTestLibrary + " --module cli_ok --current-device --arch sm_80,cpu --ptx --json "
                 "--cache-dir " + dir / "cache", fake("8.0"));
  REQUIRE(ptx.status == 0);
  nlohmann::json targets = ptx.json()["modules"][0]["targets"];
  REQUIRE(targets.size() == 2);
  CHECK(targets[0]["target"] == "compute_80");
  CHECK(targets[1]["target"] == "cpu");
}

TEST_CASE("devices says which NVRTC builds GPU targets, and why there is none") {
  // NVRTC from a folder named explicitly: its origin is that variable.
  Run found = run_kjit("devices --json", "KJIT_CUDA_DRIVER=none");
  REQUIRE(found.status == 0);
  const nlohmann::json n = found.json()["nvrtc"];
  REQUIRE(n["available"] == true);
  std::string folder = n["path"].get<std::string>().substr(0, n["path"].get<std::string>().rfind('/'));
  Run named = run_kjit("devices", "KJIT_CUDA_DRIVER=none KJIT_NVRTC_PATH=" + folder);
  CHECK(named.status == 0);
  CHECK(named.out.find("NVRTC " + n["version"].get<std::string>() + " (KJIT_NVRTC_PATH: " + folder + "/libnvrtc.so.") ==
        0);

  Run none = run_kjit("devices", "KJIT_CUDA_DRIVER=none KJIT_NVRTC_PATH=none");
  CHECK(none.status == 0);
  CHECK(none.out.find("no NVRTC: ") == 0);
  Run none_json = run_kjit("devices --json", "KJIT_CUDA_DRIVER=none KJIT_NVRTC_PATH=none");
  CHECK(none_json.json()["nvrtc"]["available"] == false);
  CHECK(none_json.json()["nvrtc"]["path"].is_null());
  CHECK(none_json.json()["nvrtc"]["reason"].get<std::string>().find("NVRTC is disabled (KJIT_NVRTC_PATH=none)") == 0);
  // Not found at all: what was searched and how to get it.
  Run missing = run_kjit("devices --json", "KJIT_CUDA_DRIVER=none KJIT_NVRTC_PATH=/nonexistent/nvrtc");
  CHECK(missing.json()["nvrtc"]["available"] == false);
  CHECK(missing.json()["nvrtc"]["reason"].get<std::string>().find("pip install nvidia-cuda-nvrtc") != std::string::npos);
}

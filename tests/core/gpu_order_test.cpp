#include <catch2/catch.hpp>

#include "gpuslice/core/gpu_policy.hpp"

using namespace gpuslice::core;

TEST_CASE("GPU policy text parses as HAMi reads it", "[order]") {
  auto single = GpuPolicy::parse("binpack");
  CHECK_FALSE(single.chain);
  CHECK(single.binpack);
  auto spread = GpuPolicy::parse("spread");
  CHECK_FALSE(spread.binpack);
  auto chain = GpuPolicy::parse("numa, binpack,numa");
  CHECK(chain.chain);
  CHECK(chain.keys == std::vector<SortKey>{SortKey::Numa, SortKey::Binpack});
  CHECK(GpuPolicy::parse("numa").chain);
  CHECK(GpuPolicy::parse("mutex").mutex);
  CHECK(GpuPolicy::parse("topology-aware").topology);
  auto filters = GpuPolicy::parse("topology-aware,mutex");
  CHECK(filters.topology);
  CHECK(filters.mutex);
  CHECK(filters.keys.empty());
  CHECK_FALSE(GpuPolicy::parse("unknown").binpack);  // anything else sorts as spread
}

TEST_CASE("card score is HAMi's float32 formula, request included", "[order]") {
  Device d;
  d.slots = 10;
  d.memory_mib = 8000;
  d.cores = 100;
  ContainerRequest r;
  r.count = 1;
  r.memory_mib = 1000;
  r.cores = 20;
  DeviceUsage u{1, 6000, 75};
  // 10 * (2/10 + 95/100 + 7000/8000)
  CHECK(device_score(d, u, r, {}) == Approx(20.25f));
  CHECK(device_score(d, u, r, {0, 0, 1}) == Approx(8.75f));
  ContainerRequest pct;
  pct.count = 1;
  pct.memory_percent = 50;
  CHECK(device_score(d, {}, pct, {}) == Approx(10.0f * (0.1f + 0.5f)));
  ContainerRequest other_vendor = r;
  other_vendor.vendor = "Cambricon";
  CHECK(device_score(d, u, other_vendor, {}) == Approx(10.0f * (0.1f + 0.75f + 0.75f)));
  Device empty;
  CHECK(device_score(empty, {}, r, {}) == 0.0f);
}

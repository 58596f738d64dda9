#include "gpuslice/realgpu/slice_env.hpp"

#include <catch2/catch.hpp>
#include <map>

using namespace gpuslice::realgpu;

namespace {
SliceEnv read(std::map<std::string, std::string> vars) {
  return read_slice_env([vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}
}  // namespace

TEST_CASE("memory limits read as HAMi writes them: bytes, k, m, g (binary)") {
  CHECK(parse_bytes("4000m", "X") == 4000ULL << 20);
  CHECK(parse_bytes("4000M", "X") == 4000ULL << 20);
  CHECK(parse_bytes("2g", "X") == 2ULL << 30);
  CHECK(parse_bytes("512k", "X") == 512ULL << 10);
  CHECK(parse_bytes("1048576", "X") == 1048576);
  CHECK(parse_bytes("0", "X") == 0);
}

TEST_CASE("malformed limits are refused with the variable named, never read as something else") {
  for (const char* bad : {"1.5g", "abc", "-1", "", "g", "4000mb", " 4000m", "99999999999999999999"}) {
    INFO(bad);
    try {
      read({{"CUDA_DEVICE_MEMORY_LIMIT", bad}});
      FAIL("accepted");
    } catch (const EnvError& e) {
      CHECK(std::string(e.what()).find("CUDA_DEVICE_MEMORY_LIMIT='") == 0);
    }
  }
  CHECK_THROWS_AS(read({{"CUDA_DEVICE_SM_LIMIT", "101"}}), EnvError);
  CHECK_THROWS_AS(read({{"CUDA_DEVICE_SM_LIMIT", "30%"}}), EnvError);
  CHECK_THROWS_AS(read({{"CUDA_DEVICE_SM_LIMIT_1", "-5"}}), EnvError);
  CHECK_THROWS_AS(read({{"GPU_CORE_UTILIZATION_POLICY", "sometimes"}}), EnvError);
  CHECK_THROWS_AS(read({{"LIBCUDA_LOG_LEVEL", "9"}}), EnvError);
  CHECK_THROWS_AS(read({{"CUDA_DEVICE_MEMORY_SHARED_CACHE", ""}}), EnvError);
}

TEST_CASE("per-device variables override the all-devices one") {
  const auto env = read({{"CUDA_DEVICE_MEMORY_LIMIT", "1g"},
                         {"CUDA_DEVICE_MEMORY_LIMIT_1", "4000m"},
                         {"CUDA_DEVICE_SM_LIMIT_0", "30"},
                         {"GPU_CORE_UTILIZATION_POLICY", "force"},
                         {"CUDA_DEVICE_MEMORY_SHARED_CACHE", "/tmp/x.cache"}});
  CHECK(env.memory_limit[0] == 1ULL << 30);
  CHECK(env.memory_limit[1] == 4000ULL << 20);
  CHECK(env.memory_limit[2] == 1ULL << 30);
  CHECK(env.throttles(0));
  CHECK_FALSE(env.throttles(1));
  CHECK(env.core_policy == CorePolicy::Force);
  CHECK(env.shared_cache == "/tmp/x.cache");
}

TEST_CASE("0 and 100 percent mean no throttling - defaults match HAMi-core") {
  CHECK_FALSE(read({{"CUDA_DEVICE_SM_LIMIT", "0"}}).throttles(0));
  CHECK_FALSE(read({{"CUDA_DEVICE_SM_LIMIT", "100"}}).throttles(0));
  const auto env = read({});
  CHECK(env.shared_cache == "/tmp/cudevshr.cache");
  CHECK(env.core_policy == CorePolicy::Default);
  CHECK_FALSE(env.any_memory_limit());
}

TEST_CASE("a percentage's refusal offers no suffix, and 0k is a valid memory limit (none)") {
  for (const char* bad : {"0k", "30m", "abc", "", "1.5"}) {
    INFO(bad);
    try {
      read({{"CUDA_DEVICE_SM_LIMIT", bad}});
      FAIL("accepted");
    } catch (const EnvError& e) {
      const std::string what = e.what();
      CHECK(what.find("CUDA_DEVICE_SM_LIMIT='") == 0);
      CHECK(what.find("percent") != std::string::npos);
      CHECK(what.find("suffix") == std::string::npos);
    }
  }
  CHECK(read({{"CUDA_DEVICE_MEMORY_LIMIT", "0k"}}).memory_limit[0] == 0);
  try {
    read({{"CUDA_DEVICE_MEMORY_LIMIT", "k"}});
    FAIL("accepted");
  } catch (const EnvError& e) {
    CHECK(std::string(e.what()).find("k, m or g suffix") != std::string::npos);
  }
}

TEST_CASE("CUDA_TASK_PRIORITY: 1 by default (HAMi-core's), 0 the highest - malformed refused") {
  CHECK(read({}).task_priority == 1);
  CHECK(read({{"CUDA_TASK_PRIORITY", "0"}}).task_priority == 0);
  CHECK(read({{"CUDA_TASK_PRIORITY", "7"}}).task_priority == 7);
  for (const char* bad : {"-1", "high", "", "1.0", "101"}) {
    INFO(bad);
    CHECK_THROWS_AS(read({{"CUDA_TASK_PRIORITY", bad}}), EnvError);
  }
}

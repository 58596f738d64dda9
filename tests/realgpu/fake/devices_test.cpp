// The fleet as both libraries report it: from GPUSLICE_FAKE_GPUS or the
// default, malformed values refused, UUIDs that pair CUDA with NVML devices,
// and CUDA_VISIBLE_DEVICES reordering the CUDA side only.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <regex>

#include "device_table.hpp"
#include "fake_fixture.hpp"

using namespace fake_test;

namespace {

std::string cuda_name(CUdevice device) {
  char name[128] = {};
  REQUIRE(cuDeviceGetName(name, sizeof name, device) == CUDA_SUCCESS);
  return name;
}

std::string uuid_text(const CUuuid& uuid) {
  gpuslice::fake::Uuid bytes{};
  std::memcpy(bytes.data(), uuid.bytes, bytes.size());
  return gpuslice::realgpu::uuid_text(bytes);
}

std::string nvml_uuid(unsigned index) {
  nvmlDevice_t device = nullptr;
  REQUIRE(nvmlDeviceGetHandleByIndex_v2(index, &device) == NVML_SUCCESS);
  char uuid[NVML_DEVICE_UUID_BUFFER_SIZE] = {};
  REQUIRE(nvmlDeviceGetUUID(device, uuid, sizeof uuid) == NVML_SUCCESS);
  return uuid;
}

}  // namespace

TEST_CASE("without GPUSLICE_FAKE_GPUS there is one H100", "[fake][devices]") {
  FakeEnvironment env;
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  int count = 0;
  REQUIRE(cuDeviceGetCount(&count) == CUDA_SUCCESS);
  CHECK(count == 1);
  CHECK(cuda_name(0) == "NVIDIA H100 80GB HBM3");
  size_t total = 0;
  REQUIRE(cuDeviceTotalMem_v2(&total, 0) == CUDA_SUCCESS);
  CHECK(total == 81559 * kMiB);
  int value = 0;
  REQUIRE(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0) == CUDA_SUCCESS);
  CHECK(value == 132);
  REQUIRE(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) == CUDA_SUCCESS);
  CHECK(value == 9);
  REQUIRE(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0) == CUDA_SUCCESS);
  CHECK(value == 0);
  CHECK(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAX, 0) == CUDA_ERROR_INVALID_VALUE);
  int version = 0;
  REQUIRE(cuDriverGetVersion(&version) == CUDA_SUCCESS);
  CHECK(version == 13000);

  REQUIRE(nvml_ready());
  unsigned nvml_count = 0;
  REQUIRE(nvmlDeviceGetCount_v2(&nvml_count) == NVML_SUCCESS);
  CHECK(nvml_count == 1);
  char version_text[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  REQUIRE(nvmlSystemGetDriverVersion(version_text, sizeof version_text) == NVML_SUCCESS);
  CHECK(std::string(version_text) == "580.00 (gpuslice fake)");
  CHECK(nvmlShutdown() == NVML_SUCCESS);
}

TEST_CASE("GPUSLICE_FAKE_GPUS lists the devices in order", "[fake][devices]") {
  FakeEnvironment env({.gpus = "NVIDIA A100-SXM4-40GB:40960:108;Tesla T4:15360:40"});
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  int count = 0;
  REQUIRE(cuDeviceGetCount(&count) == CUDA_SUCCESS);
  REQUIRE(count == 2);
  CHECK(cuda_name(0) == "NVIDIA A100-SXM4-40GB");
  CHECK(cuda_name(1) == "Tesla T4");
  size_t total = 0;
  REQUIRE(cuDeviceTotalMem_v2(&total, 1) == CUDA_SUCCESS);
  CHECK(total == 15360 * kMiB);
  int sms = 0;
  REQUIRE(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1) == CUDA_SUCCESS);
  CHECK(sms == 40);
  CUdevice device = -1;
  CHECK(cuDeviceGet(&device, 1) == CUDA_SUCCESS);
  CHECK(device == 1);
  CHECK(cuDeviceGet(&device, 2) == CUDA_ERROR_INVALID_DEVICE);

  // A short buffer gets a truncated, terminated name.
  char short_name[5] = {};
  REQUIRE(cuDeviceGetName(short_name, sizeof short_name, 1) == CUDA_SUCCESS);
  CHECK(std::string(short_name) == "Tesl");

  REQUIRE(nvml_ready());
  nvmlDevice_t handle = nullptr;
  REQUIRE(nvmlDeviceGetHandleByIndex_v2(1, &handle) == NVML_SUCCESS);
  char name[NVML_DEVICE_NAME_BUFFER_SIZE] = {};
  REQUIRE(nvmlDeviceGetName(handle, name, sizeof name) == NVML_SUCCESS);
  CHECK(std::string(name) == "Tesla T4");
  CHECK(nvmlDeviceGetName(handle, name, 4) == NVML_ERROR_INSUFFICIENT_SIZE);
  nvmlMemory_t memory{};
  REQUIRE(nvmlDeviceGetMemoryInfo(handle, &memory) == NVML_SUCCESS);
  CHECK(memory.total == 15360 * kMiB);
  CHECK(memory.used == 0);
  CHECK(memory.free == memory.total);
  unsigned index = 9;
  REQUIRE(nvmlDeviceGetIndex(handle, &index) == NVML_SUCCESS);
  CHECK(index == 1);
  unsigned node = 9;
  REQUIRE(nvmlDeviceGetNumaNodeId(handle, &node) == NVML_SUCCESS);
  CHECK(node == 0);
  CHECK(nvmlDeviceGetHandleByIndex_v2(2, &handle) == NVML_ERROR_INVALID_ARGUMENT);
  CHECK(nvmlDeviceGetIndex(reinterpret_cast<nvmlDevice_t>(&index), &index) == NVML_ERROR_INVALID_ARGUMENT);
  CHECK(nvmlShutdown() == NVML_SUCCESS);
}

TEST_CASE("a malformed GPUSLICE_FAKE_GPUS is refused with one clear line", "[fake][devices]") {
  struct Case {
    const char* value;
    const char* names;  // what the message must quote
  };
  const Case cases[] = {
      {"", "empty"},
      {"H100:81559", "\"H100:81559\""},
      {"H100:81559:132:extra", "exactly three"},
      {"H100:80G:132", "MiB \"80G\""},
      {"H100: 81559:132", "MiB \" 81559\""},
      {"H100:81559:-1", "SMs \"-1\""},
      {"H100:0:132", "MiB \"0\""},
      {":81559:132", "name"},
      {"H100:81559:132;", "entry 2"},
      {"A:1:1;;B:1:1", "entry 2"},
  };
  for (const Case& c : cases) {
    FakeEnvironment env({.gpus = c.value});
    CUresult rc = CUDA_SUCCESS;
    const std::string message = capture_stderr([&] { rc = cuInit(0); });
    INFO("GPUSLICE_FAKE_GPUS=\"" << c.value << "\" -> " << message);
    CHECK(rc == CUDA_ERROR_INVALID_VALUE);
    CHECK(message.find("GPUSLICE_FAKE_GPUS") != std::string::npos);
    CHECK(message.find(c.names) != std::string::npos);
    CHECK(std::count(message.begin(), message.end(), '\n') == 1);
    int count = 0;
    CHECK(cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED);
    nvmlReturn_t nvml_rc = NVML_SUCCESS;
    capture_stderr([&] { nvml_rc = nvmlInit_v2(); });
    CHECK(nvml_rc != NVML_SUCCESS);
  }
}

TEST_CASE("a malformed GPUSLICE_FAKE_CONTEXT_MIB is refused", "[fake][devices]") {
  FakeEnvironment env({.context_mib = "12MB"});
  CUresult rc = CUDA_SUCCESS;
  const std::string message = capture_stderr([&] { rc = cuInit(0); });
  CHECK(rc == CUDA_ERROR_INVALID_VALUE);
  CHECK(message.find("GPUSLICE_FAKE_CONTEXT_MIB=\"12MB\"") != std::string::npos);
}

TEST_CASE("CUDA and NVML report the same UUID for each device", "[fake][devices]") {
  FakeEnvironment env(
      {.gpus = "NVIDIA H100 80GB HBM3:81559:132;NVIDIA H100 80GB HBM3:81559:132;Other:1024:4"});
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  REQUIRE(nvml_ready());
  const std::regex nvml_form("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  std::vector<std::string> seen;
  for (CUdevice d = 0; d < 3; ++d) {
    CUuuid uuid{};
    REQUIRE(cuDeviceGetUuid_v2(&uuid, d) == CUDA_SUCCESS);
    CUuuid legacy{};
    REQUIRE(cuDeviceGetUuid(&legacy, d) == CUDA_SUCCESS);
    CHECK(std::memcmp(uuid.bytes, legacy.bytes, sizeof uuid.bytes) == 0);
    const std::string text = uuid_text(uuid);
    CHECK(std::regex_match(text, nvml_form));
    CHECK(text == nvml_uuid(static_cast<unsigned>(d)));
    nvmlDevice_t by_uuid = nullptr;
    REQUIRE(nvmlDeviceGetHandleByUUID(text.c_str(), &by_uuid) == NVML_SUCCESS);
    unsigned index = 99;
    REQUIRE(nvmlDeviceGetIndex(by_uuid, &index) == NVML_SUCCESS);
    CHECK(index == static_cast<unsigned>(d));
    seen.push_back(text);
  }
  // Two cards of the same model still differ (the index is in the hash).
  CHECK(seen[0] != seen[1]);
  // Deterministic: another process, or a reload, derives the same bytes.
  CHECK(seen[2] == gpuslice::realgpu::uuid_text(gpuslice::fake::device_uuid(2, "Other")));
  nvmlDevice_t none = nullptr;
  CHECK(nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &none) == NVML_ERROR_NOT_FOUND);
  CHECK(nvmlShutdown() == NVML_SUCCESS);
}

TEST_CASE("CUDA_VISIBLE_DEVICES reorders CUDA ordinals, NVML keeps physical order", "[fake][devices]") {
  FakeEnvironment env({.gpus = "A:1024:10;B:2048:20;C:4096:30", .visible_devices = "2,0"});
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  REQUIRE(nvml_ready());
  int count = 0;
  REQUIRE(cuDeviceGetCount(&count) == CUDA_SUCCESS);
  REQUIRE(count == 2);
  CHECK(cuda_name(0) == "C");
  CHECK(cuda_name(1) == "A");
  unsigned nvml_count = 0;
  REQUIRE(nvmlDeviceGetCount_v2(&nvml_count) == NVML_SUCCESS);
  CHECK(nvml_count == 3);
  CUuuid uuid{};
  REQUIRE(cuDeviceGetUuid_v2(&uuid, 0) == CUDA_SUCCESS);
  CHECK(uuid_text(uuid) == nvml_uuid(2));
  REQUIRE(cuDeviceGetUuid_v2(&uuid, 1) == CUDA_SUCCESS);
  CHECK(uuid_text(uuid) == nvml_uuid(0));

  // Memory taken on CUDA ordinal 0 shows on physical card 2.
  REQUIRE(init_with_context(0) != nullptr);
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc_v2(&p, 64 * kMiB) == CUDA_SUCCESS);
  CHECK(nvml_used(2) == 64 * kMiB);
  CHECK(nvml_used(0) == 0);
  REQUIRE(cuMemFree_v2(p) == CUDA_SUCCESS);
  CHECK(nvmlShutdown() == NVML_SUCCESS);
}

TEST_CASE("CUDA_VISIBLE_DEVICES ends at its first bad entry, like the real driver", "[fake][devices]") {
  SECTION("out-of-range index") {
    FakeEnvironment env({.gpus = "A:1024:10;B:2048:20", .visible_devices = "1,7,0"});
    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    int count = 0;
    REQUIRE(cuDeviceGetCount(&count) == CUDA_SUCCESS);
    CHECK(count == 1);
    CHECK(cuda_name(0) == "B");
  }
  SECTION("a UUID selects by identity") {
    const std::string uuid = gpuslice::realgpu::uuid_text(gpuslice::fake::device_uuid(1, "B"));
    FakeEnvironment env({.gpus = "A:1024:10;B:2048:20", .visible_devices = uuid});
    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    int count = 0;
    REQUIRE(cuDeviceGetCount(&count) == CUDA_SUCCESS);
    CHECK(count == 1);
    CHECK(cuda_name(0) == "B");
  }
  SECTION("empty hides every device") {
    FakeEnvironment env({.gpus = "A:1024:10", .visible_devices = ""});
    CHECK(cuInit(0) == CUDA_ERROR_NO_DEVICE);
  }
}

TEST_CASE("cuInit reloads only when a GPUSLICE_FAKE_ variable changed", "[fake][devices]") {
  FakeEnvironment env({.gpus = "A:1024:10;B:2048:20"});
  REQUIRE(init_with_context(0) != nullptr);
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc_v2(&p, kMiB) == CUDA_SUCCESS);

  // Like the real driver: CUDA_VISIBLE_DEVICES is not re-read by itself.
  ::setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  int count = 0;
  REQUIRE(cuDeviceGetCount(&count) == CUDA_SUCCESS);
  CHECK(count == 2);
  CHECK(cuda_used() == kMiB);

  // A new fleet is a fresh start: the process's contexts and memory go.
  ::setenv("GPUSLICE_FAKE_GPUS", "C:4096:30;D:4096:30", 1);
  REQUIRE(cuInit(0) == CUDA_SUCCESS);
  REQUIRE(cuDeviceGetCount(&count) == CUDA_SUCCESS);
  CHECK(count == 1);  // CUDA_VISIBLE_DEVICES=1 read with it
  CHECK(cuda_name(0) == "D");
  CHECK(cuMemFree_v2(p) == CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemAlloc_v2(&p, 1) == CUDA_ERROR_INVALID_CONTEXT);
}

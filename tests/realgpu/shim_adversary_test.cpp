// Programs nobody tuned the shim for (tests/realgpu/adversary), run under
// the shim on the fake driver: sizes near 2^64 on every allocation path,
// pools of another card, mapped-but-released memory, the unsuffixed legacy
// entry points, cuGetProcAddress answers the driver exports under no name,
// a forwarding libcuda, a foreign cache file. Each asserts the card's own
// figures (NVML's per-process list) against the slice.
#include <signal.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "shim_lab.hpp"

using namespace gpuslice::realgpu;
using namespace gpuslice::realgpu::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct Lab : ShimLab {
  std::string adversary() const { return (fs::path(t.probe).parent_path() / "gpuslice-adversary").string(); }
  json run(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
           std::string* err = nullptr) const {
    const ChildResult r = run_child(args, env);
    if (err) *err = r.err;
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return first_json(r.out);
  }
  json adversary(const std::string& command, uint64_t limit_mib,
                 const std::map<std::string, std::string>& env, std::string* err = nullptr) const {
    return run({adversary(), command, std::to_string(limit_mib)}, env, err);
  }
};

}  // namespace

TEST_CASE("sizes near 2^64 never pass the cap nor empty the slot, on any allocation path") {
  Lab lab;
  const json j = lab.adversary("overflow", 1000, lab.slice("overflow", 1000));
  INFO(j.dump());
  CHECK(j["granted_past_cap"] == 0);
  CHECK(j["max_card_bytes"].get<uint64_t>() <= 1000 * MiB);
  CHECK(j["max_view_card_gap_bytes"] == 0);  // the slice's view is the card's truth throughout
  for (const auto& round : j["rounds"]) {
    CHECK(round["filled_bytes"] == 1000 * MiB);
    CHECK(round["view_used_bytes"] == 1000 * MiB);
    CHECK(round["card_bytes"] == 1000 * MiB);
    CHECK(round["one_more_granted"] == false);
  }
  CHECK(j["final_view_used_bytes"] == 0);
}

TEST_CASE("sizes near 2^64 from one process while a sibling holds memory and is then killed") {
  Lab lab;
  const auto env = lab.slice("overflow-pair", 1000);
  Child holder({lab.t.probe, "alloc", "--chunk-mib", "100", "--max-mib", "600", "--hold-ms", "20000"}, env);
  REQUIRE(holder.first_line(30));
  const json j = lab.adversary("overflow", 1000, env);
  INFO(j.dump());
  CHECK(j["granted_past_cap"] == 0);
  CHECK(j["max_card_bytes"].get<uint64_t>() <= 1000 * MiB);
  for (const auto& round : j["rounds"]) {
    CHECK(round["filled_bytes"] == 400 * MiB);
    CHECK(round["view_used_bytes"] == 1000 * MiB);
    CHECK(round["card_bytes"] == 1000 * MiB);
  }
  holder.kill_hard();
  holder.wait();
  const ChildResult after = run_child({lab.t.probe, "alloc", "--chunk-mib", "1000"}, env);
  CHECK(json::parse(after.out.substr(0, after.out.find('\n')))["allocated_bytes"] == 1000 * MiB);
}

TEST_CASE("allocations from another card's pool are charged to that card") {
  Lab lab;
  auto env = lab.slice("pools", 0);
  env["GPUSLICE_FAKE_GPUS"] = "NVIDIA A100-SXM4-40GB:40960:108;NVIDIA A100-SXM4-40GB:40960:108";
  env["CUDA_DEVICE_MEMORY_LIMIT"] = "1000m";
  const json j = lab.adversary("pool-of", 1000, env);
  INFO(j.dump());
  CHECK(j["chunks_from_default_pool"] == 3);  // 900 MiB of card 1's 1000; the 4th is refused
  CHECK(j["card1_bytes_default_pool"] == 900 * MiB);
  CHECK(j["chunks_from_created_pool"] == 3);
  CHECK(j["card1_bytes_created_pool"] == 900 * MiB);
  CHECK(j["card0_view_used_bytes"] == 0);  // nothing was charged to the current card
}

TEST_CASE("a physical allocation released while mapped stays charged until unmapped") {
  Lab lab;
  const json j = lab.adversary("vmm-map", 2000, lab.slice("vmm-map", 2000));
  INFO(j.dump());
  CHECK(j["granted_while_mapped"] == false);
  CHECK(j["view_used_while_mapped"] == j["mapped_bytes"]);
  CHECK(j["card_bytes_while_mapped"] == j["mapped_bytes"]);
  CHECK(j["view_used_after_unmap"] == 0);
  CHECK(j["granted_after_unmap"] == true);
}

TEST_CASE("a pool that keeps freed memory (release threshold UINT64_MAX, as PyTorch sets) keeps it charged") {
  Lab lab;
  const json j = lab.adversary("pool-threshold", 1000, lab.slice("pool-threshold", 1000));
  INFO(j.dump());
  CHECK(j["cached_card_bytes"] == 600 * MiB);  // the driver still holds it for the pool
  CHECK(j["cached_view_used"] == 600 * MiB);
  CHECK(j["plain_granted_while_cached"] == false);  // 600 cached + 600 would pass 1000
  CHECK(j["reuse_view_used"] == 600 * MiB);         // reuse takes nothing new
  CHECK(j["reuse_card_bytes"] == 600 * MiB);
  CHECK(j["trimmed_view_used"] == 0);
  CHECK(j["trimmed_card_bytes"] == 0);
  CHECK(j["plain_granted_after_trim"] == true);
}

TEST_CASE("what loading a library (cudart 12+) or a fat binary takes counts toward the slice") {
  Lab lab;
  auto env = lab.slice("code", 1000);
  env["GPUSLICE_FAKE_MODULE_MIB"] = "100";
  const json j = lab.adversary("code-load", 1000, env);
  INFO(j.dump());
  CHECK(j["allocated_bytes"] == 800 * MiB);  // 1000 less the library's 100 and the fat binary's 100
  CHECK(j["view_used_bytes"] == 1000 * MiB);
  CHECK(j["card_bytes"] == 1000 * MiB);
}

TEST_CASE("the unsuffixed 32-bit-era entry points are capped and virtualised") {
  Lab lab;
  const json j = lab.adversary("legacy", 1000, lab.slice("legacy", 1000));
  INFO(j.dump());
  CHECK(j["total_bytes"] == 1000 * MiB);
  CHECK(j["device_total_bytes"] == 1000 * MiB);
  CHECK(j["allocated_bytes"] == 1000 * MiB);
  CHECK(j["card_bytes"] == 1000 * MiB);
  CHECK(j["pitch_allocated_bytes"] == 1000 * MiB);
  CHECK(j["array_allocated_bytes"] == 1000 * MiB);
}

TEST_CASE("cuGetProcAddress answers the driver exports under no name are still hooked (matched by name)") {
  Lab lab;
  auto env = lab.slice("by-name", 1000);
  env["GPUSLICE_FAKE_PROC_ADDRESS_PRIVATE"] = "1";
  // Without the shim: the driver's answer is a function it exports under no name.
  auto bare = driver_environment(lab.t);
  bare["GPUSLICE_FAKE_PROC_ADDRESS_PRIVATE"] = "1";
  const json plain = lab.adversary("by-name", 0, bare);
  CHECK(plain["answer_exported_as"] == "");
  CHECK(plain["allocated_bytes"] == 3000 * MiB);  // the adversary stops at 30 chunks
  // Under the shim the answer is the hook, and the cap holds.
  const json j = lab.adversary("by-name", 1000, env);
  INFO(j.dump());
  CHECK(j["answer_exported_as"] == "cuMemAlloc_v2");
  CHECK(j["allocated_bytes"] == 1000 * MiB);
  CHECK(j["card_bytes"] == 1000 * MiB);
}

TEST_CASE("a limit above the card's size: every view says the card's size") {
  Lab lab;
  auto env = lab.slice("big", 0);
  env["GPUSLICE_FAKE_GPUS"] = "NVIDIA A2:15360:10";
  env["CUDA_DEVICE_MEMORY_LIMIT"] = "20g";
  const json j = lab.adversary("view", 0, env);
  INFO(j.dump());
  CHECK(j["cuda_total_bytes"] == 15360 * MiB);
  CHECK(j["device_total_bytes"] == 15360 * MiB);
  CHECK(j["nvml_total_bytes"] == 15360 * MiB);
  CHECK(j["cuda_free_bytes"] == j["nvml_free_bytes"]);
}

TEST_CASE("the slice is charged what the driver takes (2 MiB pages), not what was asked") {
  Lab lab;
  const json j = lab.adversary("granularity", 100, lab.slice("pages", 100));
  INFO(j.dump());
  CHECK(j["granted"] == 25);  // 3 MiB requests take 4 MiB each: 25 fit in 100 MiB, not 33
  CHECK(j["view_used_bytes"] == 100 * MiB);
  CHECK(j["card_bytes"] == 100 * MiB);
}

TEST_CASE("mipmapped arrays are counted") {
  Lab lab;
  const json j = lab.adversary("mipmap", 1000, lab.slice("mipmap", 1000));
  INFO(j.dump());
  CHECK(j["granted"] == 3);
  CHECK(j["card_bytes"] == 768 * MiB);
}

TEST_CASE("a forwarding libcuda and NVML (dlsym(target, same name)) work under the shim, capped") {
  Lab lab;
  auto env = lab.slice("forward", 2048);
  const fs::path forwarding = fs::path(lab.t.fake_dir).parent_path() / "forwarding";
  env["LD_LIBRARY_PATH"] = forwarding.string();
  env["GPUSLICE_FORWARD_TARGET_CUDA"] = (fs::path(lab.t.fake_dir) / "libcuda.so.1").string();
  env["GPUSLICE_FORWARD_TARGET_NVML"] = (fs::path(lab.t.fake_dir) / "libnvidia-ml.so.1").string();
  const ChildResult r = run_child({lab.t.probe, "alloc", "--chunk-mib", "512"}, env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);  // on the old shim: SIGSEGV, the hook calling itself through the forwarder
  const json j = json::parse(r.out.substr(0, r.out.find('\n')));
  CHECK(j["allocated_bytes"] == 2048 * MiB);
  CHECK(j["stopped_by"] == "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK(j["view"]["nvml"]["total_bytes"] == 2048 * MiB);
}

TEST_CASE("a cache file that is not ours is refused, left as it was, and new ones are not world-writable") {
  Lab lab;
  auto env = lab.slice("foreign", 1000);
  const std::string path = env["CUDA_DEVICE_MEMORY_SHARED_CACHE"];
  {
    std::ofstream f(path);
    f << "some other program's data\n";
  }
  chmod(path.c_str(), 0600);
  const ChildResult r = run_child({lab.t.probe, "alloc", "--chunk-mib", "100", "--max-mib", "100"}, env);
  INFO(r.out << r.err);
  const json j = json::parse(r.out.substr(0, r.out.find('\n')));
  CHECK(j["allocated_bytes"] == 0);  // fails closed: no accounting, no allocation
  CHECK(r.err.find("not a gpuslice accounting file") != std::string::npos);
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  CHECK(content.str() == "some other program's data\n");
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  auto fresh = lab.slice("fresh", 1000);
  const ChildResult ok = run_child({lab.t.probe, "alloc", "--chunk-mib", "100", "--max-mib", "100"}, fresh);
  REQUIRE(stat(fresh["CUDA_DEVICE_MEMORY_SHARED_CACHE"].c_str(), &st) == 0);
  CHECK((st.st_mode & 0002) == 0);
}

// HAMi-core's own test scenarios (its test/ folder), as our programs.
TEST_CASE("HAMi-core #310: an async allocation freed with another card current returns to its card") {
  Lab lab;
  auto env = lab.slice("cross-free", 0);
  env["GPUSLICE_FAKE_GPUS"] = "NVIDIA L4:23034:58;NVIDIA L4:23034:58";
  env["CUDA_DEVICE_MEMORY_LIMIT"] = "1000m";
  const json j = lab.adversary("cross-free", 0, env);
  INFO(j.dump());
  CHECK(j["card0_used_allocated"] == 32 * MiB);
  CHECK(j["card1_used_after_free"] == 0);  // not decremented for memory it never held
  CHECK(j["card1_used_allocated"] == 32 * MiB);
  CHECK(j["card0_used_after_free"] == 0);
}

TEST_CASE("HAMi-core's host-memory tests: page-locked and registered host memory is not charged") {
  Lab lab;
  const json j = lab.adversary("host", 100, lab.slice("host", 100));
  INFO(j.dump());
  CHECK(j["alloc_host"] == true);
  CHECK(j["host_alloc"] == true);
  CHECK(j["registered"] == true);
  CHECK(j["view_used_bytes"] == 0);
  CHECK(j["device_allocated_bytes"] == 100 * MiB);
  CHECK(j["unregistered"] == true);
  CHECK(j["freed"] == true);
}

TEST_CASE("HAMi-core's failure-leak test: a request the driver refuses gives its reservation back") {
  Lab lab;
  auto env = lab.slice("refuses", 0);
  env["GPUSLICE_FAKE_GPUS"] = "NVIDIA A2:15360:10";
  env["CUDA_DEVICE_MEMORY_LIMIT"] = "20g";  // the slice would allow more than the card has
  const json j = lab.adversary("driver-refuses", 0, env);
  INFO(j.dump());
  CHECK(j["refused"] == 4);
  CHECK(j["view_used_bytes"] == 0);
  CHECK(j["whole_card_bytes"] == 15360 * MiB);
}

TEST_CASE(
    "the adversary through a forwarding libcuda, in a pid namespace, on two cards: never past the cap") {
  Lab lab;
  auto env = lab.slice("everything", 0);
  env["GPUSLICE_FAKE_GPUS"] = "NVIDIA L4:23034:58;NVIDIA L4:23034:58";
  env["CUDA_DEVICE_MEMORY_LIMIT"] = "1000m";
  env["GPUSLICE_FAKE_PID_NAMESPACE_OFFSET"] = "300000";
  const fs::path forwarding = fs::path(lab.t.fake_dir).parent_path() / "forwarding";
  env["LD_LIBRARY_PATH"] = forwarding.string();
  env["GPUSLICE_FORWARD_TARGET_CUDA"] = (fs::path(lab.t.fake_dir) / "libcuda.so.1").string();
  env["GPUSLICE_FORWARD_TARGET_NVML"] = (fs::path(lab.t.fake_dir) / "libnvidia-ml.so.1").string();
  const json j = lab.adversary("overflow", 1000, env);
  INFO(j.dump());
  CHECK(j["granted_past_cap"] == 0);
  CHECK(j["max_card_bytes"].get<uint64_t>() <= 1000 * MiB);
  for (const auto& round : j["rounds"]) CHECK(round["card_bytes"] == 1000 * MiB);
  const json pools = lab.adversary("pool-of", 1000, env);
  INFO(pools.dump());
  CHECK(pools["chunks_from_default_pool"] == 3);
  CHECK(pools["card0_view_used_bytes"] == 0);
}

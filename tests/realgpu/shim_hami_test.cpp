// The shim as a drop-in for HAMi-core on the node, on the fake driver:
// the files it writes read back from HAMi's offsets; the node monitor's
// feedback (gpuslice monitor, and a stand-in written from HAMi's
// feedback.go) drives `default` and task priorities; 256 processes start
// at once.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "hami_reader.hpp"
#include "hami_standin.hpp"
#include "shim_lab.hpp"

using namespace gpuslice::realgpu;
using namespace gpuslice::realgpu::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kTwoCards = "NVIDIA L4:23034:58;NVIDIA L4:23034:58";

json finished(const ChildResult& r) {
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return first_json(r.out);
}

double share(const json& j) { return j.value("share", -1.0); }

struct Lab : ShimLab {
  std::vector<std::string> spin(double seconds) const {
    return {t.probe, "spin", "--seconds", std::to_string(seconds), "--kernel-us", "2000"};
  }
  std::string cache(const std::map<std::string, std::string>& env) const {
    return env.at("CUDA_DEVICE_MEMORY_SHARED_CACHE");
  }
  // `gpuslice monitor` over this lab's hook path, feedback every 0.5 s. The
  // folder is made first, as the DaemonSet's DirectoryOrCreate mount makes
  // it on a node (the monitor refuses a hook path that is not a folder).
  std::unique_ptr<Child> monitor() const {
    fs::create_directories(t.hook_path());
    const std::string gpuslice = (fs::path(t.probe).parent_path() / "gpuslice").string();
    return std::make_unique<Child>(
        std::vector<std::string>{gpuslice, "monitor", "--hook-path", t.hook_path(), "--no-pods",
                                 "--node-name", "lab", "--feedback-period", "0.5", "--metrics-listen",
                                 "127.0.0.1:0"},
        driver_environment(t));
  }
};

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// Two 30% slices under `default` on one card: alone, a slice uses the card;
// both active, each is held to 30%, because the monitor's feedback says so
// (the switch it wrote, not the shim's own no-monitor rule, is read back).
void pair_under_feedback(Lab& lab) {
  const auto a = slice_environment(lab.t, SliceSpec{"fb-a", 0, 30, "default", ""});
  const auto b = slice_environment(lab.t, SliceSpec{"fb-b", 0, 30, "default", ""});
  const json alone = finished(run_child(lab.spin(3), a));
  CHECK(share(alone) >= 0.9);
  CHECK(HamiFile(lab.cache(a)).utilization_switch() == 0);  // a monitor wrote it (the shim starts at -1)
  Child ca(lab.spin(8), a), cb(lab.spin(8), b);
  sleep_s(4);
  CHECK(HamiFile(lab.cache(a)).utilization_switch() == 1);
  CHECK(HamiFile(lab.cache(b)).utilization_switch() == 1);
  const json ja = finished(ca.wait()), jb = finished(cb.wait());
  INFO(ja.dump() << jb.dump());
  CHECK(std::abs(share(ja) * 100 - 30) <= 3.0);
  CHECK(std::abs(share(jb) * 100 - 30) <= 3.0);
  sleep_s(1.5);  // b's recent launches age out (two passes)
  const json again = finished(run_child(lab.spin(3), a));
  CHECK(share(again) >= 0.9);
  CHECK(HamiFile(lab.cache(a)).utilization_switch() == 0);
}

// Priority 0 and priority 1 on one card: the lower one's launches wait
// while the higher one runs, which then has the card to itself.
void priorities_under_feedback(Lab& lab) {
  SliceSpec high_spec{"prio-high", 0, 30, "default", ""}, low_spec{"prio-low", 0, 30, "default", ""};
  high_spec.priority = 0;
  low_spec.priority = 1;
  const auto high = slice_environment(lab.t, high_spec), low = slice_environment(lab.t, low_spec);
  Child ch(lab.spin(6), high), cl(lab.spin(6), low);
  sleep_s(3);
  const HamiFile fh(lab.cache(high)), fl(lab.cache(low));
  CHECK(fh.priority() == 0);
  CHECK(fl.priority() == 1);
  CHECK(fl.recent_kernel() == -1);      // blocked
  CHECK(fh.utilization_switch() == 0);  // alone at its priority
  const json jh = finished(ch.wait()), jl = finished(cl.wait());
  INFO(jh.dump() << jl.dump());
  CHECK(share(jh) >= 0.85);
  CHECK(share(jl) <= 0.15);
}

}  // namespace

TEST_CASE("the files the shim writes read back from HAMi's offsets: devices, limits, slots") {
  Lab lab;
  auto env = slice_environment(lab.t, SliceSpec{"layout", 0, 0, "default", ""});
  env["GPUSLICE_FAKE_GPUS"] = kTwoCards;
  env["CUDA_DEVICE_MEMORY_LIMIT_0"] = "3000m";
  env["CUDA_DEVICE_MEMORY_LIMIT_1"] = "5000m";
  env["CUDA_DEVICE_SM_LIMIT"] = "40";
  env["CUDA_TASK_PRIORITY"] = "0";
  env["GPUSLICE_FAKE_CONTEXT_MIB"] = "300";
  env["GPUSLICE_FAKE_MODULE_MIB"] = "20";
  env["GPUSLICE_FAKE_PID_NAMESPACE_OFFSET"] = "500000";
  // One process holds 1024 MiB on card 1; another runs kernels (a module) on card 0.
  Child holder(
      lab.probe({"--device", "1", "alloc", "--chunk-mib", "512", "--max-mib", "1024", "--hold-ms", "4000"}),
      env);
  const json held = json::parse(holder.first_line(60).value_or("{}"));
  REQUIRE(held.value("allocated_bytes", 0ULL) == 1024 * MiB);
  Child spinner(lab.spin(3), env);
  sleep_s(1.5);
  const HamiFile f(lab.cache(env));
  CHECK(f.magic() == 19920718);
  CHECK(f.major() == 1);
  CHECK(f.minor() == 2);
  CHECK(f.device_num() == 2);
  const json devices = finished(run_child({lab.t.probe, "devices"}, [&] {
    auto e = driver_environment(lab.t);
    e["GPUSLICE_FAKE_GPUS"] = kTwoCards;
    return e;
  }()))["devices"];
  REQUIRE(devices.size() == 2);
  CHECK(f.uuid(0) == devices[0]["uuid"]);  // the container's NVML order
  CHECK(f.uuid(1) == devices[1]["uuid"]);
  CHECK(f.limit(0) == 3000 * MiB);
  CHECK(f.limit(1) == 5000 * MiB);
  CHECK(f.sm_limit(0) == 40);
  CHECK(f.sm_limit(1) == 40);
  CHECK(f.priority() == 0);
  CHECK(f.proc_num() == 2);
  const auto slots = f.live_slots();
  REQUIRE(slots.size() == 2);
  const auto& h = slots[0].pid == holder.pid() ? slots[0] : slots[1];
  const auto& s = slots[0].pid == holder.pid() ? slots[1] : slots[0];
  CHECK(h.pid == holder.pid());
  CHECK(h.hostpid == holder.pid() + 500000);
  CHECK(h.status == 1);
  CHECK(h.used[1].context == 300 * MiB);
  CHECK(h.used[1].data == 1024 * MiB);
  CHECK(h.used[1].module == 0);
  CHECK(h.used[1].total == 1324 * MiB);
  CHECK(h.used[0].total == 0);
  CHECK(s.pid == spinner.pid());
  CHECK(s.hostpid == spinner.pid() + 500000);
  CHECK(s.used[0].context == 300 * MiB);
  CHECK(s.used[0].module == 20 * MiB);
  CHECK(s.used[0].total == s.used[0].context + s.used[0].module + s.used[0].data);
  CHECK(f.last_kernel_time() > 0);
  CHECK(f.recent_kernel() == 2);
  finished(spinner.wait());
  holder.wait();
  // Both left: their slots are exited, proc_num back to 0.
  const HamiFile after(lab.cache(env));
  CHECK(after.live_slots().empty());
  CHECK(after.proc_num() == 0);
}

TEST_CASE("a process started with its limit unset still gets its slice's limit from the file") {
  Lab lab;
  const auto env = lab.slice("unset", 1000);
  Child first(lab.probe({"alloc", "--chunk-mib", "100", "--max-mib", "100", "--hold-ms", "3000"}), env);
  REQUIRE(first.first_line(60));
  auto sneaky = env;
  sneaky["CUDA_DEVICE_MEMORY_LIMIT_0"] = "";  // removed
  const ChildResult r = run_child(lab.probe({"alloc", "--chunk-mib", "100"}), sneaky);
  const json j = finished(r);
  CHECK(j["stopped_by"] == "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK(j["allocated_bytes"].get<uint64_t>() <= 900 * MiB);
  first.wait();
}

TEST_CASE("default and priorities under gpuslice monitor's feedback") {
  Lab lab;
  auto monitor = lab.monitor();
  REQUIRE(monitor->first_line(0.5) == std::nullopt);  // still running (it logs to stderr)
  SECTION("two 30% slices: unthrottled alone, 30% each together") { pair_under_feedback(lab); }
  SECTION("priority 0 over priority 1") { priorities_under_feedback(lab); }
  monitor->kill_hard();
}

TEST_CASE("default and priorities with a stand-in for HAMi's vGPUmonitor writing the feedback") {
  Lab lab;
  HamiMonitorStandIn hami(lab.t.hook_path(), 0.5);
  SECTION("two 30% slices: unthrottled alone, 30% each together") { pair_under_feedback(lab); }
  SECTION("priority 0 over priority 1") { priorities_under_feedback(lab); }
  CHECK(hami.passes() > 0);
}

TEST_CASE("start storm: 256 processes of one slice start at once (context, first allocation) within 2 s") {
  Lab lab;
  auto env = lab.slice("storm", 64000);
  env["GPUSLICE_FAKE_PID_NAMESPACE_OFFSET"] = "300000";  // host-pid discovery included
  const std::string adversary = (fs::path(lab.t.probe).parent_path() / "gpuslice-adversary").string();
  const json j = finished(run_child({adversary, "start-storm", "256"}, env));
  std::fprintf(stderr, "shim start storm: %s\n", j.dump().c_str());
  CHECK(j["started"] == 256);
  CHECK(j["failed"] == 0);
  CHECK(j["max_seconds"].get<double>() <= 2.0);
}

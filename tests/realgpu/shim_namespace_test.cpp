// The shim inside a pid namespace (every Kubernetes pod has its own): NVML
// lists processes by their host pids, which are not getpid(). The fake
// models it with GPUSLICE_FAKE_PID_NAMESPACE_OFFSET: NVML reports the
// process as pid + offset. A slice's processes share one offset (one pod);
// two slices have two (two pods).
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "shim_lab.hpp"

using namespace gpuslice::realgpu;
using namespace gpuslice::realgpu::testing;
using nlohmann::json;

namespace {

struct Pod {
  std::map<std::string, std::string> env;
  Pod(const Toolkit& t, const SliceSpec& spec, int pid_offset) : env(slice_environment(t, spec)) {
    env["GPUSLICE_FAKE_PID_NAMESPACE_OFFSET"] = std::to_string(pid_offset);
  }
};

json first_json(const ChildResult& r) {
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return testing::first_json(r.out);
}

struct Lab : ShimLab {
  std::vector<std::string> spin(int seconds) const {
    return {t.probe, "spin", "--seconds", std::to_string(seconds), "--kernel-us", "2000"};
  }
};

}  // namespace

TEST_CASE("in a pid namespace a force cap still holds its share") {
  Lab lab;
  const Pod pod(lab.t, SliceSpec{"ns-force", 0, 30, "force", ""}, 400000);
  const json j = first_json(run_child(lab.spin(5), pod.env));
  INFO(j.dump());
  CHECK(std::abs(j["share"].get<double>() * 100 - 30) <= 3.0);
}

TEST_CASE("in pid namespaces two default slices sharing a card are each held to their share") {
  Lab lab;
  const Pod a(lab.t, SliceSpec{"ns-a", 0, 30, "default", ""}, 400000);
  const Pod b(lab.t, SliceSpec{"ns-b", 0, 30, "default", ""}, 800000);
  Child ca(lab.spin(6), a.env), cb(lab.spin(6), b.env);
  const json ja = first_json(ca.wait()), jb = first_json(cb.wait());
  INFO(ja.dump() << jb.dump());
  CHECK(std::abs(ja["share"].get<double>() * 100 - 30) <= 4.0);
  CHECK(std::abs(jb["share"].get<double>() * 100 - 30) <= 4.0);
}

TEST_CASE("in a pid namespace two processes of one default slice are one tenant and may burst") {
  Lab lab;
  const Pod pod(lab.t, SliceSpec{"ns-pair", 0, 30, "default", ""}, 400000);
  Child a(lab.spin(4), pod.env), b(lab.spin(4), pod.env);
  const json ja = first_json(a.wait()), jb = first_json(b.wait());
  CHECK(ja["share"].get<double>() + jb["share"].get<double>() >= 0.9);
}

TEST_CASE("in a pid namespace a context's footprint counts toward the slice") {
  Lab lab;
  Pod pod(lab.t, SliceSpec{"ns-footprint", 2000, 0, "default", ""}, 400000);
  pod.env["GPUSLICE_FAKE_CONTEXT_MIB"] = "300";
  const json j = first_json(run_child({lab.t.probe, "alloc", "--chunk-mib", "100"}, pod.env));
  INFO(j.dump());
  CHECK(j["allocated_bytes"] == 1700 * MiB);  // 2000 MiB less the context's 300
  CHECK(j["view"]["nvml"]["used_bytes"] == 2000 * MiB);
}

// gpuslice monitor over a hook path of accounting files (written by the
// shim's region code, or byte by byte as libvgpu.so leaves them): which
// containers it reports and how it names them, its feedback, what it does
// with dead and stale folders, and its pods from the API and from a dump.
#include "gpuslice/monitor/monitor.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "api_double.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/realgpu/container_dirs.hpp"
#include "gpuslice/realgpu/slice_region.hpp"

using namespace gpuslice;
using namespace gpuslice::monitor;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t MiB = 1ULL << 20;
const std::string kPods = std::string(GPUSLICE_MONITOR_TEST_DATA) + "/node-pods.yaml";
const std::string kVllm = "6f1c2a9e-0000-4000-8000-000000000001";
const std::string kTrainer = "6f1c2a9e-0000-4000-8000-000000000002";
const std::string kElsewhere = "6f1c2a9e-0000-4000-8000-000000000003";

struct Hook {
  std::string path;
  Hook() {
    char tmpl[] = "/tmp/gpuslice-hook-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~Hook() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string cache(const std::string& uid, const std::string& container) const {
    const std::string dir = realgpu::container_dir_path(path, uid, container);
    fs::create_directories(dir);
    return dir + "/5d0c2e7a-1b2c-4d5e-8f90-0123456789ab.cache";
  }
};

realgpu::DeviceUuid card(unsigned char seed) {
  realgpu::DeviceUuid u{};
  u.fill(seed);
  return u;
}

realgpu::RegionSetup one_card(uint64_t limit_mib, int priority = 1) {
  realgpu::RegionSetup s;
  s.devices = {card(0xaa)};
  s.memory_limits = {limit_mib * MiB};
  s.priority = priority;
  return s;
}

// No NVML in these tests: the host's cards are not what they check.
struct NoGpus final : HostGpus {
  std::string problem() const override { return "no NVML in this test"; }
  std::vector<HostGpu> list() override { return {}; }
  std::map<unsigned, unsigned> process_utilization(const std::string&) override { return {}; }
};

Monitor make(const Hook& h, std::unique_ptr<PodSource> pods, MonitorOptions o = {}) {
  o.hook_path = h.path;
  if (o.node_name.empty()) o.node_name = "gpu-1";
  return Monitor(o, std::move(pods), std::make_unique<NoGpus>());
}

// Sets a folder's modification time `seconds` in the past.
void age(const std::string& dir, int seconds) {
  const time_t then = ::time(nullptr) - seconds;
  utimbuf t{then, then};
  REQUIRE(utime(dir.c_str(), &t) == 0);
}

// A file as libvgpu.so (HAMi-core 1.2) leaves it: one live process using
// `used` bytes on one card, no gpuslice control slot.
void write_hami_core_file(const std::string& path, uint64_t used, uint64_t limit) {
  std::vector<unsigned char> b(2008953, 0);
  auto put = [&](size_t at, auto v) { std::memcpy(b.data() + at, &v, sizeof v); };
  put(0, int32_t{19920718});
  put(4, uint32_t{1});
  put(8, uint32_t{2});
  put(56, uint64_t{1});
  std::memcpy(b.data() + 64, "GPU-aaaaaaaa-0000-0000-0000-000000000001", 40);
  put(1600, limit);
  put(1728, uint64_t{100});
  put(1856, int32_t{4242});
  put(1856 + 8 + 16, used);  // used[0].data_size
  put(1856 + 8 + 32, used);  // used[0].total
  put(1856 + 1928, int32_t{1});
  put(2008896, int32_t{1});
  put(2008904, int32_t{2});
  put(2008908, int32_t{1});
  put(2008912, uint64_t{1700000000});
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<long>(b.size()));
}

}  // namespace

TEST_CASE("containers are named from the node's pods - other nodes' and unknown folders are not reported") {
  Hook h;
  realgpu::SliceRegion server(h.cache(kVllm, "server"), one_card(3000));
  REQUIRE(server.reserve(0, 1000 * MiB, 3000 * MiB).granted);
  realgpu::SliceRegion trainer(h.cache(kTrainer, "main"), one_card(6000));
  trainer.join();
  realgpu::SliceRegion other(h.cache(kElsewhere, "main"), one_card(1000));
  realgpu::SliceRegion unknown(h.cache("0000dead-0000-4000-8000-00000000beef", "main"), one_card(1000));
  auto m = make(h, pods_from_file(kPods));
  m.tick();
  const auto views = m.containers();
  REQUIRE(views.size() == 2);
  CHECK(views[0].ns == "research");  // namespace/name order
  CHECK(views[0].pod == "trainer");
  CHECK(views[0].container == "main");
  CHECK(views[1].pod == "vllm-0");
  CHECK(views[1].container == "server");
  REQUIRE(views[1].devices.size() == 1);
  CHECK(views[1].devices[0].uuid == realgpu::uuid_text(card(0xaa)));
  CHECK(views[1].devices[0].total == 1000 * MiB);
  CHECK(views[1].devices[0].limit == 3000 * MiB);
  const std::string text = m.metrics();
  CHECK(text.find("pod=\"vllm-0\"") != std::string::npos);
  CHECK(text.find("elsewhere") == std::string::npos);
  CHECK(text.find("beef") == std::string::npos);
}

TEST_CASE("without a pod source every folder is reported, named by its pod UID") {
  Hook h;
  realgpu::SliceRegion a(h.cache(kElsewhere, "main"), one_card(1000));
  auto m = make(h, no_pods());
  const auto views = m.containers();
  REQUIRE(views.size() == 1);
  CHECK(views[0].ns.empty());
  CHECK(views[0].pod == kElsewhere);
  CHECK(views[0].container == "main");
}

TEST_CASE("a file libvgpu.so wrote reads as HAMi's monitor reads it") {
  Hook h;
  write_hami_core_file(h.cache(kVllm, "server"), 700 * MiB, 3000 * MiB);
  auto m = make(h, pods_from_file(kPods));
  m.tick();
  const auto views = m.containers();
  REQUIRE(views.size() == 1);
  CHECK(views[0].devices[0].uuid == "GPU-aaaaaaaa-0000-0000-0000-000000000001");
  CHECK(views[0].devices[0].total == 700 * MiB);
  CHECK(views[0].devices[0].buffer == 700 * MiB);
  CHECK(views[0].devices[0].limit == 3000 * MiB);
  CHECK(views[0].last_kernel_time == 1700000000);
}

TEST_CASE("folders the monitor cannot read are skipped, the rest still reported") {
  Hook h;
  std::ofstream(h.cache(kVllm, "server")) << "not an accounting file";
  const std::string dir = realgpu::container_dir_path(h.path, kTrainer, "main");
  fs::create_directories(dir);
  for (const char* n : {"a.cache", "b.cache", "c.cache"}) std::ofstream(dir + "/" + n) << "x";
  fs::create_directories(h.path + "/containers/no-underscore");
  realgpu::SliceRegion ok(h.cache(kElsewhere, "main"), one_card(1000));
  auto m = make(h, no_pods());
  m.tick();
  CHECK(m.containers().size() == 1);
}

TEST_CASE("the feedback pass writes HAMi's fields into the node's files") {
  Hook h;
  realgpu::SliceRegion a(h.cache(kVllm, "server"), one_card(1000, 0));
  realgpu::SliceRegion b(h.cache(kTrainer, "main"), one_card(1000, 1));
  MonitorOptions o;
  auto m = make(h, no_pods(), o);
  m.tick();  // both fresh files count active (recent_kernel 2 -> 1)
  CHECK(m.last_feedback().active == 2);
  CHECK(b.blocked_by_priority());
  CHECK(a.utilization_switch() == 0);
  CHECK(b.utilization_switch() == 1);
  m.tick();  // no launches: both age out, b is released
  CHECK_FALSE(b.blocked_by_priority());
  SECTION("--no-feedback writes nothing") {
    realgpu::SliceRegion c(h.cache(kElsewhere, "main"), one_card(1000));
    o.feedback = false;
    auto ro = make(h, no_pods(), o);
    ro.tick();
    CHECK(c.utilization_switch() == -1);
  }
}

TEST_CASE("a gpuslice file no live process holds stops counting (its processes were killed)") {
  Hook h;
  const std::string path = h.cache(kVllm, "server");
  { realgpu::SliceRegion create(path, one_card(3000)); }
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    realgpu::SliceRegion mine(path);
    mine.reserve(0, 2000 * MiB, 3000 * MiB);
    _exit(0);  // no leave(): as after SIGKILL
  }
  int status = 0;
  waitpid(child, &status, 0);
  auto m = make(h, pods_from_file(kPods));
  CHECK(m.containers()[0].devices[0].total == 2000 * MiB);  // what HAMi's monitor would keep showing
  m.tick();
  CHECK(m.containers()[0].devices[0].total == 0);
}

TEST_CASE(
    "monitor --clean-stale removes only a gone pod's folder that is old and that no live process holds") {
  Hook h;
  MonitorOptions o;
  o.clean_stale = true;
  o.stale_after = 300;
  const std::string gone_dir =
      realgpu::container_dir_path(h.path, "0000dead-0000-4000-8000-00000000beef", "main");
  const std::string held_dir =
      realgpu::container_dir_path(h.path, "0000dead-0000-4000-8000-00000000cafe", "main");
  const std::string young_dir =
      realgpu::container_dir_path(h.path, "0000dead-0000-4000-8000-00000000f00d", "main");
  const std::string live_dir = realgpu::container_dir_path(h.path, kVllm, "server");
  { realgpu::SliceRegion r(h.cache("0000dead-0000-4000-8000-00000000beef", "main"), one_card(1000)); }
  realgpu::SliceRegion holder(h.cache("0000dead-0000-4000-8000-00000000cafe", "main"), one_card(1000));
  { realgpu::SliceRegion r(h.cache("0000dead-0000-4000-8000-00000000f00d", "main"), one_card(1000)); }
  { realgpu::SliceRegion r(h.cache(kVllm, "server"), one_card(1000)); }
  for (const auto& d : {gone_dir, held_dir, live_dir}) age(d, 600);
  auto m = make(h, pods_from_file(kPods), o);
  m.tick();
  CHECK_FALSE(fs::exists(gone_dir));
  CHECK(fs::exists(held_dir));   // a live process holds its file
  CHECK(fs::exists(young_dir));  // within the grace period
  CHECK(fs::exists(live_dir));   // its pod runs here
  SECTION("without --clean-stale nothing is ever removed") {
    age(young_dir, 600);
    MonitorOptions keep;
    auto k = make(h, pods_from_file(kPods), keep);
    k.tick();
    CHECK(fs::exists(young_dir));
  }
}

TEST_CASE("pods come from the API server: this node's, by field selector, kept in step with the watch") {
  serve::testing::ApiDouble api(GPUSLICE_SERVE_TEST_DATA "/api");
  serve::KubeConnection c;
  c.server = api.server();
  c.bearer_token = api.token();
  serve::KubeFeedOptions o;
  o.watch_timeout_seconds = 5;
  auto pods = pods_from_api(c, "node-a", o);
  CHECK(api.field_selector("pods") == "spec.nodeName=node-a");
  CHECK(api.list_calls("nodes") == 0);
  auto names = [&] {
    std::vector<std::string> out;
    for (const auto& p : pods->pods("node-a")) out.push_back(p.name);
    return out;
  };
  CHECK(names() == std::vector<std::string>{"train-7"});
  nlohmann::json pod = nlohmann::json::parse(R"({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "late", "namespace": "default", "uid": "uid-late"},
      "spec": {"nodeName": "node-a", "containers": [{"name": "main"}]}, "status": {"phase": "Running"}})");
  api.add_pod(pod);
  for (int i = 0; i < 200 && names().size() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(names().size() == 2);
  api.delete_pod("default", "late");
  for (int i = 0; i < 200 && names().size() > 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(names() == std::vector<std::string>{"train-7"});
}

TEST_CASE("a pods file that does not read is refused with its line and field") {
  Hook h;
  const std::string bad = h.path + "/pods.yaml";
  std::ofstream(bad) << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: 3\n";
  try {
    pods_from_file(bad);
    FAIL("accepted");
  } catch (const core::InputError& e) {
    CHECK(e.file() == bad);
    CHECK(e.line() > 0);
    CHECK(e.field().find("containers") != std::string::npos);
  }
}

TEST_CASE("deploy/monitor: the DaemonSet runs the CLI as documented, on the host's hook path") {
  std::vector<YAML::Node> docs;
  for (const auto& d :
       YAML::LoadAllFromFile(std::string(GPUSLICE_SOURCE_DIR) + "/deploy/monitor/daemonset.yaml"))
    if (d && !d.IsNull()) docs.push_back(d);
  std::map<std::string, YAML::Node> by_kind;
  for (const auto& d : docs) by_kind[d["kind"].as<std::string>()] = d;
  REQUIRE(by_kind.count("DaemonSet") == 1);
  REQUIRE(by_kind.count("ServiceAccount") == 1);
  REQUIRE(by_kind.count("ClusterRole") == 1);
  const YAML::Node spec = by_kind["DaemonSet"]["spec"]["template"]["spec"];
  CHECK(spec["serviceAccountName"].as<std::string>() ==
        by_kind["ServiceAccount"]["metadata"]["name"].as<std::string>());
  CHECK(spec["hostPID"].as<bool>());
  const YAML::Node c = spec["containers"][0];
  std::vector<std::string> args;
  for (const auto& a : c["command"]) args.push_back(a.as<std::string>());
  REQUIRE(args.size() >= 3);
  CHECK(args[0] == "gpuslice");
  CHECK(args[1] == "monitor");
  CHECK(std::count(args.begin(), args.end(), "--in-cluster") == 1);
  CHECK(std::count(args.begin(), args.end(), "--hook-path=/usr/local/vgpu") == 1);
  CHECK(std::count(args.begin(), args.end(), "--metrics-listen=:9394") == 1);
  CHECK(std::count(args.begin(), args.end(), "--clean-stale") == 0);  // opt-in
  CHECK(c["env"][0]["name"].as<std::string>() == "NODE_NAME");
  CHECK(c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>() == "spec.nodeName");
  CHECK(c["ports"][0]["containerPort"].as<int>() == 9394);
  CHECK(c["volumeMounts"][0]["mountPath"].as<std::string>() == "/usr/local/vgpu");
  CHECK(spec["volumes"][0]["hostPath"]["path"].as<std::string>() == "/usr/local/vgpu");
  std::set<std::string> verbs;
  for (const auto& rule : by_kind["ClusterRole"]["rules"])
    for (const auto& v : rule["verbs"]) verbs.insert(v.as<std::string>());
  CHECK(verbs == std::set<std::string>{"get", "list", "watch"});  // reads pods, writes nothing
  // Every flag it passes parses.
  for (const auto& a : args)
    if (a.rfind("--", 0) == 0) {
      const std::string flag = a.substr(0, a.find('='));
      CHECK((flag == "--in-cluster" || flag == "--hook-path" || flag == "--metrics-listen" ||
             flag == "--feedback-period"));
    }
}

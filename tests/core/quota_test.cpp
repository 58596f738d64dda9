// HAMi v2.10's namespace ResourceQuota: the book (pkg/device/quota_test.go's
// cases), ResourceQuota objects as read, and the scheduler's quick paths
// agreeing with its full report while a quota binds.
#include "gpuslice/core/quota.hpp"

#include <catch2/catch.hpp>
#include <random>

#include "gpuslice/core/codec/resource_quota.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/core/scheduler.hpp"

using namespace gpuslice::core;
using Catch::Matchers::Contains;

namespace {

PodAllocation one_card(int64_t mib, int32_t cores) {
  PodAllocation a;
  a.containers.push_back({DeviceGrant{0, mib, cores}});
  return a;
}

}  // namespace

TEST_CASE("quota_test.go TestFitQuota: used 1000/2000 MiB, 200/400 cores", "[quota]") {
  QuotaBook book;
  book.add_quota("testns", {2000, 400});
  book.charge("testns", {1000, 200});
  const auto h = book.headroom("testns");
  REQUIRE(h);
  CHECK(h->admits({500, 100}));
  CHECK_FALSE(h->admits({1500, 100}));    // memory past the limit
  CHECK_FALSE(h->admits({500, 300}));     // cores past the limit
  CHECK(h->admits({1000, 200}));          // reaching both limits exactly fits (strict >)
  CHECK_FALSE(book.headroom("otherns"));  // a namespace without quota: no check
}

TEST_CASE("quota_test.go TestFitQuotaExplicitZeroBlocks (#2313)", "[quota]") {
  QuotaBook book;
  book.add_quota("team-zero", {0, std::nullopt});
  const auto h = book.headroom("team-zero");
  REQUIRE(h);
  CHECK_FALSE(h->admits({500, 0}));
  CHECK(h->admits({0, 0}));  // a pod asking no memory still fits (0 + 0 > 0 is false)
  // Usage alone makes no limit: an unlimited namespace is not checked.
  QuotaBook usage_only;
  usage_only.charge("ns", {5000, 50});
  CHECK_FALSE(usage_only.headroom("ns"));
}

TEST_CASE("quota_test.go TestAddUsageAndRmUsage: removal clamps at zero", "[quota]") {
  QuotaBook book;
  book.add_quota("testns", {4000, 400});
  book.charge("testns", quota_use(one_card(1000, 100)));
  CHECK(book.used("testns") == QuotaUse{1000, 100});
  book.release("testns", quota_use(one_card(1000, 100)));
  CHECK(book.used("testns") == QuotaUse{0, 0});
  book.release("testns", quota_use(one_card(1000, 100)));
  CHECK(book.used("testns") == QuotaUse{0, 0});
}

TEST_CASE("quota_test.go TestAddQuotaAndDelQuota / TestUpdateQuotaKeepsLimitEnforced", "[quota]") {
  QuotaBook book;
  book.charge("ns", {800, 0});
  book.add_quota("ns", {1000, std::nullopt});
  CHECK(book.headroom("ns")->memory_mib == 200);
  CHECK_FALSE(book.headroom("ns")->cores);
  // Update: the new limit replaces the old at once.
  book.update_quota("ns", {1000, std::nullopt}, {900, 50});
  CHECK(book.headroom("ns")->memory_mib == 100);
  CHECK(book.headroom("ns")->cores == 50);
  // Delete: unlimited again, the usage kept.
  book.remove_quota("ns", {900, 50});
  CHECK_FALSE(book.headroom("ns"));
  CHECK(book.used("ns") == QuotaUse{800, 0});
  CHECK_FALSE(book.has_limits());
}

TEST_CASE("metrics entries: used for every namespace with usage, limits where set", "[quota]") {
  QuotaBook book;
  book.add_quota("a", {1000, std::nullopt});
  book.charge("b", {300, 30});
  const auto e = book.entries();
  REQUIRE(e.size() == 3);
  CHECK((e[0].ns == "a" && e[0].resource == kQuotaMemoryResource && e[0].limit_set && e[0].limit == 1000));
  CHECK((e[1].ns == "b" && e[1].resource == kQuotaCoresResource && e[1].used == 30 && !e[1].limit_set));
  CHECK((e[2].ns == "b" && e[2].resource == kQuotaMemoryResource && e[2].used == 300));
}

TEST_CASE("a pod counts per card, init containers at their peak (CollapseInitContainerUsage)", "[quota]") {
  PodAllocation a;
  a.init_count = 2;
  a.containers = {{DeviceGrant{0, 3000, 50}},
                  {DeviceGrant{0, 1000, 80}},
                  {DeviceGrant{0, 1000, 10}, DeviceGrant{1, 1000, 10}},
                  {DeviceGrant{0, 500, 5}}};
  // card 0: max(init peak 3000 / 80 cores, app 1500 / 15) = 3000 MiB, 80 cores; card 1: 1000, 10.
  CHECK(quota_use(a) == QuotaUse{4000, 90});
}

TEST_CASE("ResourceQuota objects: managed keys only, bad values named", "[quota][codec]") {
  const std::string yaml = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ResourceQuota
  metadata: {name: gpu, namespace: team-a}
  spec:
    hard:
      cpu: "20"
      pods: "10"
      requests.nvidia.com/gpumem: "1"
      nvidia.com/gpumem: "1"
      limits.nvidia.com/gpu: "4"
      limits.nvidia.com/gpumem: 4k
      limits.nvidia.com/gpucores: "200"
- apiVersion: v1
  kind: ResourceQuota
  metadata: {name: only-cpu, namespace: team-b}
  spec: {hard: {limits.cpu: "8"}}
)";
  const auto q = codec::parse_resource_quotas(yaml, "quotas.yaml");
  REQUIRE(q.size() == 2);
  CHECK(q[0].ns == "team-a");
  CHECK(q[0].name == "gpu");
  CHECK(q[0].limits == QuotaLimits{4000, 200});
  CHECK(q[1].limits.empty());  // TestDelQuotaNonLimitsKey: nothing HAMi manages

  auto fails = [](const std::string& value, const std::string& what) {
    const std::string text =
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: n}\nspec:\n"
        "  hard:\n    limits.nvidia.com/gpumem: " +
        value + "\n";
    try {
      codec::parse_resource_quotas(text, "q.yaml");
      FAIL("accepted " << value);
    } catch (const InputError& e) {
      CHECK(e.file() == "q.yaml");
      CHECK(e.line() == 6);
      CHECK(e.field() == "spec.hard.limits.nvidia.com/gpumem");
      CHECK_THAT(e.detail(), Contains(what));
    }
  };
  fails("\"-100\"", "negative");
  fails("lots", "lots");
  fails("{a: 1}", "quantity");

  // A fraction is a quantity HAMi's AsInt64 refuses: skipped, with a warning.
  std::vector<std::string> warnings;
  const auto frac = codec::parse_resource_quotas(
      "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {limits.nvidia.com/gpucores: "
      "\"1.5\"}}\n",
      "f.yaml", &warnings);
  REQUIRE(frac.size() == 1);
  CHECK(frac[0].ns == "default");
  CHECK(frac[0].limits.empty());
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Contains("f.yaml:4"));
}

namespace {

Node node_of(const std::string& name, std::vector<int64_t> cards) {
  Node n;
  n.name = name;
  for (size_t i = 0; i < cards.size(); ++i) {
    Device d;
    d.uuid = name + "-" + std::to_string(i);
    d.index = static_cast<int>(i);
    d.type = "NVIDIA-A100";
    d.slots = 4;
    d.memory_mib = cards[i];
    d.cores = 100;
    d.healthy = true;
    n.devices.push_back(d);
  }
  return n;
}

}  // namespace

TEST_CASE("while a quota binds, the quick paths choose as the full report does", "[quota][scheduler]") {
  for (const char* name : {"hami-binpack", "hami-spread", "fgd", "bestfit", "gpupacking", "dotprod"}) {
    DYNAMIC_SECTION(name) {
      std::mt19937 rng(7);
      Cluster cluster;
      for (int n = 0; n < 24; ++n)
        cluster.add_node(node_of("n" + std::to_string(n), {n % 3 == 0 ? 40000 : 16000, 16000, 24000}));
      QuotaBook book;
      book.add_quota("team-a", {60000, 500});
      book.add_quota("team-b", {20000, std::nullopt});
      auto quick_policy = make_policy(name);
      auto full_policy = make_policy(name);
      Scheduler quick;
      quick.set_quotas(&book);
      std::vector<std::pair<PodRequest, Decision>> running;
      int refused_by_quota = 0;
      for (int i = 0; i < 160; ++i) {
        PodRequest pod;
        pod.name = "p" + std::to_string(i);
        pod.ns = i % 3 == 0 ? "team-b" : (i % 3 == 1 ? "team-a" : "free");
        ContainerRequest c;
        c.count = 1 + static_cast<int32_t>(rng() % 2);
        if (rng() % 2)
          c.memory_mib = 1000 + static_cast<int64_t>(rng() % 8) * 1000;
        else
          c.memory_percent = 10 + static_cast<int32_t>(rng() % 5) * 10;
        c.cores = static_cast<int32_t>(rng() % 4) * 20;
        pod.containers.push_back(c);
        const Decision d = quick.place(cluster, pod, *quick_policy, Detail::Minimal);
        Scheduler fresh;
        fresh.set_quotas(&book);
        const Decision full = fresh.place(cluster, pod, *full_policy, Detail::Full);
        REQUIRE(d.placed() == full.placed());
        if (d.placed()) {
          CHECK(d.node == full.node);
          CHECK(d.allocation == full.allocation);
          Scheduler::commit(cluster, pod, d, *quick_policy, &book);
          running.emplace_back(pod, d);
        } else {
          for (const auto& [id, refusal] : full.failed)
            if (refusal.count(Reason::ResourceQuotaNotFit) > 0) {
              ++refused_by_quota;
              break;
            }
        }
        for (const char* ns : {"team-a", "team-b"}) {
          const auto h = book.headroom(ns);
          REQUIRE(h);
          CHECK(*h->memory_mib >= 0);
          if (h->cores) CHECK(*h->cores >= 0);
        }
        // Departures now and then: the namespace's headroom grows back.
        if (i % 5 == 4 && !running.empty()) {
          const size_t k = rng() % running.size();
          const auto& [p, dec] = running[k];
          cluster.release(*dec.node, dec.allocation, p.host);
          book.release(p.ns, quota_use(dec.allocation));
          running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        }
      }
      CHECK(refused_by_quota > 0);
      CHECK(running.size() > 40);
    }
  }
}

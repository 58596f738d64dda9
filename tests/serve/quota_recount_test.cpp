// serve's quota accounting under a random mix of filters, binds, feed
// deletions, terminations, re-creations and reservation expiries, checked
// after every operation against a recount from scratch: what every pod the
// state still holds (by the test's own model of HAMi's cache) counts against
// its namespace, read off the hami.io/vgpu-devices-allocated it was given.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <random>
#include <thread>

#include "api_double.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/core/quota.hpp"
#include "gpuslice/serve/decision_state.hpp"
#include "gpuslice/serve/extender_metrics.hpp"
#include "gpuslice/serve/memory_cluster.hpp"

using namespace gpuslice;
using namespace gpuslice::serve;

namespace {

nlohmann::json node_json(const std::string& name) {
  std::vector<core::Device> devices;
  for (int c = 0; c < 2; ++c)
    devices.push_back(core::healthy_card(fmt::format("GPU-{}-{}", name, c), c, "NVIDIA-A100", 4, 16000));
  return {{"metadata",
           {{"name", name},
            {"annotations",
             {{std::string(core::codec::kRegisterAnnotation),
               core::codec::encode_registration_json(devices)}}}}}};
}

nlohmann::json pod_json(const std::string& ns, const std::string& name, int cards, int mem, int cores) {
  return nlohmann::json::parse(fmt::format(
      R"({{"metadata":{{"name":"{}","namespace":"{}","uid":"{}"}},"spec":{{"containers":[{{"name":"main",
      "resources":{{"limits":{{"nvidia.com/gpu":"{}","nvidia.com/gpumem":"{}","nvidia.com/gpucores":"{}"}}}}}}]}}}})",
      name, ns, name, cards, mem, cores));
}

// What one allocation annotation counts (one container: the sum of its cards).
core::QuotaUse counted(const std::string& annotation) {
  core::QuotaUse u;
  for (const auto& container : core::codec::decode_allocation_text(annotation))
    for (const auto& g : container) {
      u.memory_mib += g.memory_mib;
      u.cores += g.cores;
    }
  return u;
}

struct ModelPod {
  std::string ns, annotation, node;
  bool bound = false;
  std::chrono::system_clock::time_point expiry{};
};

}  // namespace

TEST_CASE("serve's quota usage matches a recount from scratch over 1,500 operations", "[serve][quota]") {
  auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  MemoryWriter writer;
  StateOptions o;
  o.release_lock_after_bind = true;
  o.reservation_ttl = std::chrono::seconds(30);
  o.clock = [&t] { return t; };
  DecisionState state(o, writer);
  // The same operations on a state that builds every refusal afresh: a kept
  // refusal must never answer for a pod its namespace's quota now refuses
  // (or now admits).
  MemoryWriter afresh_writer;
  StateOptions afresh_options = o;
  afresh_options.reuse_refusals = false;
  DecisionState afresh(afresh_options, afresh_writer);
  std::vector<nlohmann::json> nodes;
  std::vector<std::string> names;
  for (int n = 0; n < 6; ++n) {
    names.push_back(fmt::format("node-{}", n));
    nodes.push_back(node_json(names.back()));
  }
  state.quotas_replaced({{"team-a", "gpu", {30000, 150}, 0}, {"team-b", "gpu", {20000, std::nullopt}, 0}});
  state.replace_all(nodes, std::vector<nlohmann::json>{});
  afresh.quotas_replaced({{"team-a", "gpu", {30000, 150}, 0}, {"team-b", "gpu", {20000, std::nullopt}, 0}});
  afresh.replace_all(nodes, std::vector<nlohmann::json>{});

  std::mt19937 rng(2026);
  std::map<std::string, ModelPod> held;  // name -> what the state should hold for it
  const std::vector<std::string> namespaces{"team-a", "team-b", "free"};
  int next = 0, placed = 0, refused_by_quota = 0, expired = 0, binds = 0, deletions = 0, recreated = 0;
  auto expire = [&] {
    for (auto it = held.begin(); it != held.end();)
      if (!it->second.bound && it->second.expiry <= t) {
        it = held.erase(it);
        ++expired;
      } else {
        ++it;
      }
  };
  auto pick = [&](auto pred) -> std::string {
    std::vector<std::string> keys;
    for (const auto& [k, p] : held)
      if (pred(p)) keys.push_back(k);
    return keys.empty() ? std::string() : keys[rng() % keys.size()];
  };

  for (int op = 0; op < 1500; ++op) {
    const auto kind = rng() % 10;
    if (kind < 5) {  // a new pod's filter
      const std::string ns = namespaces[rng() % namespaces.size()];
      const std::string name = fmt::format("p{}", next++);
      ExtenderArgs args;
      // One pod in six fits no card (20000 MiB): refused by the fleet, its
      // answer kept while no node changes, and not kept once its namespace's
      // quota could refuse it too.
      const int mem = rng() % 6 == 0 ? 20000 : 1000 + static_cast<int>(rng() % 8) * 1000;
      args.pod = pod_json(ns, name, 1 + static_cast<int>(rng() % 2), mem, static_cast<int>(rng() % 5) * 10);
      args.node_names = names;
      expire();
      const ExtenderFilterResult r = state.filter(args);
      const ExtenderFilterResult again = afresh.filter(args);
      REQUIRE(r.nodes == again.nodes);
      REQUIRE(r.failed == again.failed);
      if (r.nodes && !r.nodes->empty()) {
        ++placed;
        const std::string annotation = writer.pod_annotations(ns, name)[core::codec::kAllocatedAnnotation];
        held[name] = {ns, annotation, r.nodes->front(), false, t + o.reservation_ttl};
      } else {
        // Over its namespace's quota, or the fleet is full: never counted.
        bool by_quota = false;
        r.failed.for_each([&](std::string_view, std::string_view why) {
          by_quota = by_quota || why.find("ResourceQuotaNotFit") != std::string_view::npos;
        });
        if (by_quota) ++refused_by_quota;
      }
    } else if (kind < 7) {  // a bind of a reservation
      expire();
      const std::string name = pick([](const ModelPod& p) { return !p.bound; });
      if (!name.empty()) {
        ModelPod& p = held[name];
        CHECK(state.bind({name, p.ns, name, p.node}).empty());
        CHECK(afresh.bind({name, p.ns, name, p.node}).empty());
        p.bound = true;
        ++binds;
      }
    } else if (kind < 9) {  // the feed: deleted, or ended (Succeeded), or deleted and created again
      const std::string name = pick([](const ModelPod& p) { return p.bound; });
      if (!name.empty()) {
        const ModelPod p = held[name];
        nlohmann::json pod = pod_json(p.ns, name, 1, 1000, 0);
        pod["metadata"]["annotations"] = {{std::string(core::codec::kAssignedNodeAnnotation), p.node},
                                          {std::string(core::codec::kAllocatedAnnotation), p.annotation}};
        pod["spec"]["nodeName"] = p.node;
        const auto how = rng() % 3;
        if (how == 0) {
          state.pod_changed(WatchKind::Deleted, pod);
          afresh.pod_changed(WatchKind::Deleted, pod);
          held.erase(name);
          ++deletions;
        } else if (how == 1) {
          pod["status"]["phase"] = "Succeeded";
          state.pod_changed(WatchKind::Modified, pod);
          afresh.pod_changed(WatchKind::Modified, pod);
          held.erase(name);
          ++deletions;
        } else {
          // Deleted, then the same pod listed again as running: it holds once.
          pod["status"]["phase"] = "Running";
          for (DecisionState* s : {&state, &afresh}) {
            s->pod_changed(WatchKind::Deleted, pod);
            s->pod_changed(WatchKind::Added, pod);
            s->pod_changed(WatchKind::Modified, pod);
          }
          ++recreated;
        }
      }
    } else {  // time passes: reservations not bound expire at the next filter or bind
      t += std::chrono::seconds(rng() % 20);
    }
    // The recount: every held pod's grants by namespace, against the state's
    // books (asking returns reservations past their time, as /metrics does).
    expire();
    std::map<std::string, core::QuotaUse> want;
    for (const auto& [name, p] : held) {
      const core::QuotaUse u = counted(p.annotation);
      want[p.ns].memory_mib += u.memory_mib;
      want[p.ns].cores += u.cores;
    }
    for (const auto& ns : namespaces) {
      INFO("operation " << op << ", namespace " << ns);
      REQUIRE(state.quota_used(ns) == want[ns]);
    }
    // Quotas are never passed by what the state handed out.
    CHECK(want["team-a"].memory_mib <= 30000);
    CHECK(want["team-a"].cores <= 150);
    CHECK(want["team-b"].memory_mib <= 20000);
  }
  INFO(fmt::format("placed {}, quota refusals {}, expired {}, binds {}, deletions {}, re-created {}", placed,
                   refused_by_quota, expired, binds, deletions, recreated));
  CHECK(refused_by_quota > 20);
  CHECK(expired > 20);
  CHECK(binds > 50);
  CHECK(deletions > 20);
  CHECK(recreated > 5);
}

TEST_CASE("a kept refusal answers only while the namespace's quota cannot refuse the pod",
          "[serve][quota][refusal]") {
  MemoryWriter writer;
  DecisionState state(StateOptions{}, writer);
  state.quotas_replaced({{"team-a", "gpu", {30000, std::nullopt}, 0}});
  state.replace_all(std::vector<nlohmann::json>{node_json("node-0")}, std::vector<nlohmann::json>{});
  auto filter = [&](const std::string& name, int mem) {
    ExtenderArgs a;
    a.pod = pod_json("team-a", name, 1, mem, 0);
    a.node_names = {"node-0"};
    return state.filter(a);
  };
  // 20000 MiB fits no 16000 MiB card; 20000 of 30000 cannot pass the quota.
  CHECK(filter("huge-1", 20000).failed.at("node-0") == "2/2 CardInsufficientMemory");
  CHECK(filter("huge-2", 20000).failed.at("node-0") == "2/2 CardInsufficientMemory");
  CHECK(state.refusals_reused_count() == 1);  // the kept answer
  // 12000 MiB placed in team-a: 12000 + 20000 now passes 30000, so the
  // quota refuses each card first; the kept answer must not be given.
  REQUIRE(filter("placed", 12000).nodes);
  CHECK(filter("huge-3", 20000).failed.at("node-0") == "2/2 ResourceQuotaNotFit");
  CHECK(state.refusals_reused_count() == 1);
}

TEST_CASE("serve's /metrics gauges and quota changes from the feed", "[serve][quota]") {
  MemoryWriter writer;
  DecisionState state(StateOptions{}, writer);
  state.quotas_replaced({{"team-a", "gpu", {4000, std::nullopt}, 0}});
  state.replace_all(std::vector<nlohmann::json>{node_json("node-0")}, std::vector<nlohmann::json>{});
  ExtenderArgs big;
  big.pod = pod_json("team-a", "big", 1, 5000, 0);
  big.node_names = {"node-0"};
  const auto refused = state.filter(big);
  REQUIRE_FALSE(refused.nodes);
  REQUIRE(refused.failed.size() == 1);
  CHECK(refused.failed.at("node-0") == "2/2 ResourceQuotaNotFit");
  // The quota raised (HAMi's UpdateQuota): the same pod fits.
  state.quota_changed(WatchKind::Modified, {"team-a", "gpu", {6000, std::nullopt}, 0});
  big.pod["metadata"]["uid"] = "big-2";
  const auto fits = state.filter(big);
  REQUIRE(fits.nodes);
  const auto entries = state.quota_entries();
  REQUIRE(entries.size() == 2);
  CHECK((entries[0].resource == core::kQuotaCoresResource && entries[0].used == 0 && !entries[0].limit_set));
  CHECK((entries[1].resource == core::kQuotaMemoryResource && entries[1].used == 5000 &&
         entries[1].limit == 6000 && entries[1].limit_set));
  // HAMi's gauges, its names and labels (metrics.go collectQuotaMetrics).
  const std::string text = Metrics{}.render(state);
  CHECK_THAT(text, Catch::Matchers::Contains(
                       "hami_resource_quota_used{limit=\"6000\",namespace=\"team-a\",quota_name=\"nvidia.com/"
                       "gpumem\"} 5000\n"));
  CHECK_THAT(text, Catch::Matchers::Contains(
                       "hami_resource_quota_used{limit=\"0\",namespace=\"team-a\",quota_name=\"nvidia.com/"
                       "gpucores\"} 0\n"));
  CHECK_THAT(text,
             Catch::Matchers::Contains(
                 "hami_resource_quota_limit{namespace=\"team-a\",quota_name=\"nvidia.com/gpumem\"} 6000\n"));
  CHECK_THAT(text, !Catch::Matchers::Contains(
                       "hami_resource_quota_limit{namespace=\"team-a\",quota_name=\"nvidia.com/gpucores\"}"));
  // Deleted: unlimited again (DelQuota), the usage kept.
  state.quota_changed(WatchKind::Deleted, {"team-a", "gpu", {6000, std::nullopt}, 0});
  CHECK_FALSE(state.quota_entries()[1].limit_set);
  CHECK(state.quota_used("team-a").memory_mib == 5000);
}

TEST_CASE("serve lists and watches ResourceQuotas from the API (or serves without them on 404)",
          "[serve][quota][feed]") {
  using gpuslice::serve::testing::ApiDouble;
  using gpuslice::serve::testing::connection_to;
  auto quota = [](int64_t mib) {
    return nlohmann::json{
        {"apiVersion", "v1"},
        {"kind", "ResourceQuota"},
        {"metadata", {{"name", "gpu"}, {"namespace", "team-a"}}},
        {"spec", {{"hard", {{"limits.nvidia.com/gpumem", std::to_string(mib)}, {"pods", "10"}}}}}};
  };
  auto limit_of = [](DecisionState& state) -> std::optional<int64_t> {
    for (const auto& e : state.quota_entries())
      if (e.ns == "team-a" && e.resource == core::kQuotaMemoryResource && e.limit_set) return e.limit;
    return std::nullopt;
  };
  auto eventually = [](const std::function<bool()>& ready) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!ready()) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  };
  KubeFeedOptions o;
  o.quotas = true;
  o.backoff_initial_seconds = 0.01;
  o.backoff_max_seconds = 0.05;
  {
    ApiDouble api(gpuslice::serve::testing::kApiData);
    api.put_quota(quota(4000));
    MemoryWriter writer;
    DecisionState state(StateOptions{}, writer);
    auto feed = make_kube_feed(connection_to(api), o);
    feed->start(state);
    CHECK(limit_of(state) == 4000);
    api.put_quota(quota(9000));  // MODIFIED: HAMi's UpdateQuota
    CHECK(eventually([&] { return limit_of(state) == 9000; }));
    api.delete_quota("team-a", "gpu");  // DELETED: unlimited again
    CHECK(eventually([&] { return !limit_of(state); }));
    feed->stop();
  }
  {
    ApiDouble api(gpuslice::serve::testing::kApiData);  // answers 404 for resourcequotas
    MemoryWriter writer;
    DecisionState state(StateOptions{}, writer);
    auto feed = make_kube_feed(connection_to(api), o);
    feed->start(state);
    CHECK(state.ready());
    CHECK_FALSE(limit_of(state));
    feed->stop();
  }
}

TEST_CASE("the admission webhook's quota check reads what the extender's pods hold",
          "[serve][quota][webhook]") {
  MemoryWriter writer;
  DecisionState state(StateOptions{}, writer);
  state.quotas_replaced({{"team-a", "gpu", {10000, std::nullopt}, 0}});
  state.replace_all(std::vector<nlohmann::json>{node_json("node-0")}, std::vector<nlohmann::json>{});
  // Nothing held: 10000 MiB reaches the limit exactly and fits; 10001 does not.
  CHECK(state.quota_admits("team-a", {10000, 0}));
  CHECK_FALSE(state.quota_admits("team-a", {10001, 0}));
  ExtenderArgs a;
  a.pod = pod_json("team-a", "held", 1, 6000, 0);
  a.node_names = {"node-0"};
  REQUIRE(state.filter(a).nodes);
  // 6000 held (HAMi charges at filter time): 4000 more fits, 4001 passes 10000.
  CHECK(state.quota_admits("team-a", {4000, 0}));
  CHECK_FALSE(state.quota_admits("team-a", {4001, 0}));
  // No limit on cores, none on another namespace.
  CHECK(state.quota_admits("team-a", {0, 1000}));
  CHECK(state.quota_admits("team-b", {1000000, 1000}));
}

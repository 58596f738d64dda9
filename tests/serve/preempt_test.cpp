// serve's preempt verb: kube-scheduler's ExtenderPreemptionArgs in both
// forms and both casings, answered with the victims HAMi's fit needs,
// worked out by hand from kube-scheduler's rules on
// tests/serve/data/preempt-cluster.yaml:
//   gpu-a: card 0 low-a (priority 10, 12000 MiB) and tiny-a (20, 2000 MiB);
//          card 1 mid-a (50, 12000 MiB)
//   gpu-b: card 0 high-b (1000, 15000 MiB)
//   gpu-c: card 0 old-c (10, 8000 MiB, started Nov 1) and new-c (10,
//          7000 MiB, started Nov 19 23:00 UTC)
// Cards hold 15360 MiB.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <string>

#include "gpuslice/serve/preemption_protocol.hpp"
#include "gpuslice/serve/server.hpp"
#include "rfc3339.hpp"
#include "serve_fixture.hpp"

using namespace gpuslice::serve;
using namespace gpuslice::serve::testing;

namespace {

constexpr const char* kCluster = "tests/serve/data/preempt-cluster.yaml";

nlohmann::json preemptor(int priority, int cards, int mib, const char* policy = nullptr) {
  nlohmann::json pod = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", "urgent"}, {"namespace", "default"}, {"uid", "u-urgent"}}},
                        {"spec",
                         {{"schedulerName", "hami-scheduler"},
                          {"priority", priority},
                          {"containers",
                           {{{"name", "main"},
                             {"resources",
                              {{"limits",
                                {{"nvidia.com/gpu", std::to_string(cards)},
                                 {"nvidia.com/gpumem", std::to_string(mib)}}}}}}}}}}};
  if (policy) pod["spec"]["preemptionPolicy"] = policy;
  return pod;
}

// What kube-scheduler would send with nodeCacheCapable: its own victims
// per node (counted by slots: here whatever it chose), as UIDs.
nlohmann::json meta_args(const nlohmann::json& pod, const std::vector<std::string>& nodes) {
  nlohmann::json map = nlohmann::json::object();
  for (const auto& n : nodes) map[n] = {{"Pods", {{{"UID", "u-tiny-a"}}}}, {"NumPDBViolations", 0}};
  return {{"Pod", pod}, {"NodeNameToMetaVictims", map}};
}

// node -> victim UIDs of an answer.
std::map<std::string, std::vector<std::string>> victims_of(const nlohmann::json& answer) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [node, v] : answer.at("NodeNameToMetaVictims").items())
    for (const auto& p : v.at("Pods")) out[node].push_back(p.at("UID").get<std::string>());
  return out;
}

using Victims = std::map<std::string, std::vector<std::string>>;

nlohmann::json ask(Fixture& f, const nlohmann::json& args) {
  return nlohmann::json::parse(
      encode_preemption_result(f.state->preempt(decode_preemption_args(args.dump()))));
}

}  // namespace

TEST_CASE("preempt keeps the nodes where evictions free the pod's card", "[serve][preempt]") {
  Fixture f(kCluster);
  // A priority-100 pod asking one card of 10000 MiB. gpu-a: all three go,
  // it fits; importance order mid-a, tiny-a, low-a: mid-a back (card 0
  // empty: fits), tiny-a back (card 0 has 13360 free: fits), low-a back
  // (card 0 1360 free, card 1 3360: no) -> low-a, though kube-scheduler
  // offered tiny-a. gpu-b: high-b outranks the pod: dropped. gpu-c: both
  // priority-10 pods must go (8000 + 7000 of 15360).
  const auto answer = ask(f, meta_args(preemptor(100, 1, 10000), {"gpu-a", "gpu-b", "gpu-c"}));
  CHECK(victims_of(answer) == Victims{{"gpu-a", {"u-low-a"}}, {"gpu-c", {"u-old-c", "u-new-c"}}});
  CHECK(answer["NodeNameToMetaVictims"]["gpu-a"]["NumPDBViolations"] == 0);
}

TEST_CASE("preempt frees both cards of a two-card pod", "[serve][preempt]") {
  Fixture f(kCluster);
  // Two cards of 8000 MiB on gpu-a: mid-a back (card 1 3360 free: no) is a
  // victim; tiny-a back (card 0 13360 free, card 1 empty: fits) stays;
  // low-a back (card 0 1360 free: no) is a victim. Most important first.
  const auto answer = ask(f, meta_args(preemptor(100, 2, 8000), {"gpu-a"}));
  CHECK(victims_of(answer) == Victims{{"gpu-a", {"u-mid-a", "u-low-a"}}});
}

TEST_CASE("preempt orders equal priorities by start time", "[serve][preempt]") {
  Fixture f(kCluster);
  // gpu-c, a pod asking 7000 MiB: old-c started first, so it is the more
  // important and is put back first (7360 free: fits); new-c back leaves
  // 360 MiB: new-c is the victim.
  const auto answer = ask(f, meta_args(preemptor(100, 1, 7000), {"gpu-c"}));
  CHECK(victims_of(answer) == Victims{{"gpu-c", {"u-new-c"}}});
}

TEST_CASE("preemptionPolicy Never preempts nobody, and nor does a low priority", "[serve][preempt]") {
  Fixture f(kCluster);
  auto answer = ask(f, meta_args(preemptor(100, 1, 10000, "Never"), {"gpu-a", "gpu-c"}));
  CHECK(answer == nlohmann::json{{"NodeNameToMetaVictims", nlohmann::json::object()}});
  // Priority 10: nobody on gpu-a or gpu-c is lower (equal is not).
  answer = ask(f, meta_args(preemptor(10, 1, 15000), {"gpu-a", "gpu-c"}));
  CHECK(victims_of(answer).empty());
  // A node that is not registered, or where the pod fits already, is left out
  // (kube-scheduler refuses a node with no victims).
  answer = ask(f, meta_args(preemptor(100, 1, 1000), {"gpu-a", "nowhere"}));
  CHECK(victims_of(answer).empty());
}

TEST_CASE("preempt reads both forms and both casings", "[serve][preempt]") {
  Fixture f(kCluster);
  const nlohmann::json pod = preemptor(100, 1, 10000);
  // NodeNameToVictims: full pods (without nodeCacheCapable).
  const nlohmann::json offered = {{"apiVersion", "v1"},
                                  {"kind", "Pod"},
                                  {"metadata", {{"name", "tiny-a"}, {"uid", "u-tiny-a"}}},
                                  {"spec", {{"priority", 20}}},
                                  {"status", {{"startTime", "2026-11-01T00:00:00Z"}}}};
  const nlohmann::json full = {
      {"Pod", pod}, {"NodeNameToVictims", {{"gpu-a", {{"Pods", {offered}}, {"NumPDBViolations", 0}}}}}};
  CHECK(victims_of(ask(f, full)) == Victims{{"gpu-a", {"u-low-a"}}});
  const ExtenderPreemptionArgs decoded = decode_preemption_args(full.dump());
  CHECK_FALSE(decoded.meta_form);
  REQUIRE(decoded.nodes.size() == 1);
  REQUIRE(decoded.nodes[0].pods.size() == 1);
  CHECK(decoded.nodes[0].pods[0].uid == "u-tiny-a");
  CHECK(decoded.nodes[0].pods[0].priority == 20);
  CHECK(decoded.nodes[0].pods[0].start_time == "2026-11-01T00:00:00Z");
  // Lower-case field names, as Go also reads them.
  const nlohmann::json lower = {
      {"pod", pod},
      {"nodeNameToMetaVictims", {{"gpu-a", {{"pods", {{{"uid", "u-tiny-a"}}}}, {"numPDBViolations", 1}}}}}};
  const auto answer = ask(f, lower);
  CHECK(victims_of(answer) == Victims{{"gpu-a", {"u-low-a"}}});
  // serve does not watch budgets: kube-scheduler's count, at most one a victim.
  CHECK(answer["NodeNameToMetaVictims"]["gpu-a"]["NumPDBViolations"] == 1);
}

TEST_CASE("preempt changes nothing, and deleted victims free their cards for the pod", "[serve][preempt]") {
  Fixture f(kCluster);
  const int64_t before = f.memory_used("GPU-aaaa-0");
  const size_t reservations = f.state->reservation_count();
  const auto answer = ask(f, meta_args(preemptor(100, 1, 10000), {"gpu-a"}));
  REQUIRE(victims_of(answer) == Victims{{"gpu-a", {"u-low-a"}}});
  CHECK(f.memory_used("GPU-aaaa-0") == before);
  CHECK(f.state->reservation_count() == reservations);
  // kube-scheduler deletes the victim; the feed says so; the pod then fits gpu-a.
  f.state->pod_changed(
      WatchKind::Deleted,
      nlohmann::json{{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata", {{"name", "low-a"}, {"namespace", "default"}, {"uid", "u-low-a"}}},
                     {"spec", {{"nodeName", "gpu-a"}, {"containers", {{{"name", "app"}}}}}}});
  CHECK(f.memory_used("GPU-aaaa-0") == before - 12000);
  ExtenderArgs filter;
  filter.pod = preemptor(100, 1, 10000);
  filter.node_names = {"gpu-a", "gpu-b", "gpu-c"};
  const ExtenderFilterResult placed = f.state->filter(filter);
  REQUIRE(placed.nodes);
  CHECK(*placed.nodes == std::vector<std::string>{"gpu-a"});
  CHECK(f.state->reservation_count() == reservations + 1);
  // With the pod reserved there, no eviction is needed for a second look.
  CHECK(victims_of(ask(f, meta_args(preemptor(100, 1, 1000), {"gpu-a"}))).empty());
  // A reservation is nobody's victim, even for a higher priority. urgent
  // (10000 MiB) sits on card 0 beside tiny-a (card 1 could not hold it
  // beside mid-a). A priority-200 pod asking 15000 MiB: tiny-a and mid-a go
  // (card 1 empty: fits); mid-a back leaves no card: victim; tiny-a back
  // (card 1 still empty): stays. urgent is never offered.
  nlohmann::json vip = preemptor(200, 1, 15000);
  vip["metadata"] = {{"name", "vip"}, {"namespace", "default"}, {"uid", "u-vip"}};
  CHECK(victims_of(ask(f, meta_args(vip, {"gpu-a"}))) == Victims{{"gpu-a", {"u-mid-a"}}});
}

TEST_CASE("POST /preempt over HTTP, and bad requests answered 400", "[serve][preempt][http]") {
  Fixture f(kCluster);
  Metrics metrics;
  Server server(*f.state, metrics, [] {
    ServerOptions o;
    o.listen = {"127.0.0.1", 0};
    o.metrics_listen = {"127.0.0.1", 0};
    return o;
  }());
  server.start();
  httplib::Client c("127.0.0.1", server.port());
  auto res =
      c.Post("/preempt", meta_args(preemptor(100, 2, 8000), {"gpu-a", "gpu-b"}).dump(), "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(victims_of(nlohmann::json::parse(res->body)) == Victims{{"gpu-a", {"u-mid-a", "u-low-a"}}});
  for (const std::string& bad :
       {std::string("{bad"), std::string("[]"), std::string(R"({"NodeNameToMetaVictims":{}})"),
        nlohmann::json{{"Pod", preemptor(100, 1, 1)}, {"NodeNameToMetaVictims", nlohmann::json::array()}}
            .dump(),
        nlohmann::json{{"Pod", preemptor(100, 1, 1)},
                       {"NodeNameToMetaVictims", {{"gpu-a", {{"Pods", {{}}}}}}}}
            .dump(),
        [] {
          nlohmann::json p = preemptor(100, 1, 1);
          p["spec"]["priority"] = "high";
          return nlohmann::json{{"Pod", p}, {"NodeNameToMetaVictims", nlohmann::json::object()}}.dump();
        }()}) {
    INFO(bad);
    res = c.Post("/preempt", bad, "application/json");
    REQUIRE(res);
    CHECK(res->status == 400);
    CHECK_FALSE(nlohmann::json::parse(res->body)["Error"].get<std::string>().empty());
  }
  httplib::Client m("127.0.0.1", server.metrics_port());
  res = m.Get("/metrics");
  REQUIRE(res);
  CHECK_THAT(res->body, Catch::Contains("gpuslice_preempt_total{result=\"success\"} 1\n"));
  CHECK_THAT(res->body, Catch::Contains("gpuslice_preempt_total{result=\"error\"} 6\n"));
  server.stop();
}

TEST_CASE("status.startTime reads as seconds since 1970", "[serve][preempt]") {
  CHECK(rfc3339_seconds("1970-01-01T00:00:00Z") == 0.0);
  CHECK(rfc3339_seconds("2026-11-28T06:15:52Z") == 1795846552.0);
  CHECK(rfc3339_seconds("2000-02-29T12:00:00Z") == 951825600.0);
  CHECK(rfc3339_seconds("2000-02-29T13:30:00+01:30") == 951825600.0);
  CHECK(rfc3339_seconds("2000-02-29T10:00:00-02:00") == 951825600.0);
  CHECK(rfc3339_seconds("2000-02-29T12:00:00.25Z") == Approx(951825600.25));
  for (const char* bad : {"", "2026-11-28", "2026-13-01T00:00:00Z", "2026-11-28T06:15:52", "yesterday",
                          "2026-11-28T06:15:52Zjunk", "2026-11-28T25:00:00Z"}) {
    INFO(bad);
    CHECK_FALSE(rfc3339_seconds(bad));
  }
}

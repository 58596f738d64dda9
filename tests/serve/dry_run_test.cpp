// Cluster Autoscaler's dry-run filter: template nodes fitted from their own
// objects at zero usage, pods packed onto the nodes CA's binpacking
// estimator adds, nothing reserved or written, no later answer changed.
#include <catch2/catch.hpp>
#include <map>
#include <tuple>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/serve/extender_metrics.hpp"
#include "serve_fixture.hpp"
#include "template_nodes.hpp"

using namespace gpuslice::serve;
using namespace gpuslice::serve::testing;

namespace {

// One T4 of 15360 MiB split ten ways, as HAMi's device plugin registers it.
const std::string kT4Registration =
    R"([{"id":"GPU-template-0","count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core","health":true}])";

nlohmann::json node_object(const std::string& name, const std::string& registration) {
  nlohmann::json n = {{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
                      {"status",
                       {{"capacity", {{"cpu", "8"}, {"memory", "32Gi"}, {"nvidia.com/gpu", "10"}}},
                        {"allocatable", {{"cpu", "8"}, {"memory", "32Gi"}, {"nvidia.com/gpu", "10"}}}}}};
  if (!registration.empty()) n["metadata"]["annotations"] = {{"hami.io/node-nvidia-register", registration}};
  return n;
}

nlohmann::json pod_object(const std::string& name, const std::string& uid, int gpumem) {
  return {{"metadata", {{"name", name}, {"namespace", "default"}, {"uid", uid}}},
          {"spec",
           {{"containers",
             {{{"name", "main"},
               {"resources",
                {{"limits",
                  {{"nvidia.com/gpu", "1"},
                   {"nvidia.com/gpumem", std::to_string(gpumem)},
                   {"nvidia.com/gpucores", "10"}}}}}}}}}}};
}

// The request as CA's extender client sends it (nodeCacheCapable: false).
ExtenderArgs nodes_request(const nlohmann::json& pod, const std::vector<nlohmann::json>& nodes) {
  nlohmann::json body = {{"Pod", pod}, {"Nodes", {{"items", nodes}}}, {"NodeNames", nullptr}};
  return decode_extender_args(body.dump());
}

// The request as kube-scheduler sends it (nodeCacheCapable: true).
ExtenderArgs names_request(const nlohmann::json& pod, const std::vector<std::string>& names) {
  nlohmann::json body = {{"Pod", pod}, {"NodeNames", names}};
  return decode_extender_args(body.dump());
}

const std::string kFamily = "template-node-for-t4-pool-5577006791947779410";

}  // namespace

TEST_CASE("dry run: a template node fits from its registration at zero usage and nothing is written",
          "[serve][dry-run]") {
  Fixture f;
  const int64_t base = f.memory_used(kT4);
  const size_t events = f.writer.events().size();
  FilterOutcome outcome{};
  const auto r = f.state->filter(
      nodes_request(pod_object("pending-0", "p0", 15000), {node_object(kFamily, kT4Registration)}), &outcome);
  CHECK(outcome == FilterOutcome::DryRun);
  REQUIRE(r.nodes);
  CHECK(*r.nodes == std::vector<std::string>{kFamily});
  CHECK(r.failed.empty());
  CHECK(r.error.empty());
  // Nothing held, patched or recorded.
  CHECK(f.state->reservation_count() == 0);
  CHECK(f.memory_used(kT4) == base);
  CHECK(f.writer.pod_annotations("default", "pending-0").empty());
  CHECK(f.writer.events().size() == events);
  // 15360 MiB cards: 16000 MiB fits no card of the template.
  const auto big = f.state->filter(
      nodes_request(pod_object("pending-1", "p1", 16000), {node_object(kFamily, kT4Registration)}), &outcome);
  CHECK(outcome == FilterOutcome::DryRun);
  CHECK_FALSE(big.nodes);
  CHECK_THAT(big.failed.at(kFamily), Catch::Contains("CardInsufficientMemory"));
}

TEST_CASE("dry run: known nodes in the request are decided as a real filter would, without a reservation",
          "[serve][dry-run]") {
  Fixture f;
  const int64_t base = f.memory_used(kT4);
  // gpu-t4-1 as the feed shows it (its registration is what serve read, not the object sent).
  const auto r = f.state->filter(nodes_request(
      pod_object("pending-0", "p0", 3000),
      {node_object("gpu-t4-1", ""), node_object("control-1", ""), node_object(kFamily, kT4Registration)}));
  REQUIRE(r.nodes);
  CHECK(*r.nodes == std::vector<std::string>{"gpu-t4-1", kFamily});
  CHECK(f.state->reservation_count() == 0);
  CHECK(f.memory_used(kT4) == base);
  // More than the live T4 has free: refused there with HAMi's reason, the template still fits.
  const auto full =
      f.state->filter(nodes_request(pod_object("pending-1", "p1", static_cast<int>(15360 - base + 1)),
                                    {node_object("gpu-t4-1", ""), node_object(kFamily, kT4Registration)}));
  REQUIRE(full.nodes);
  CHECK(*full.nodes == std::vector<std::string>{kFamily});
  CHECK_THAT(full.failed.at("gpu-t4-1"), Catch::Contains("CardInsufficientMemory"));
}

TEST_CASE("dry run: pods are packed onto the nodes CA's binpacking estimator adds, as CA would",
          "[serve][dry-run]") {
  Fixture f;
  const std::string e0 = kFamily + "-e-0", e1 = kFamily + "-e-1";
  auto ask = [&](const std::string& pod, const std::string& node) {
    return f.state->filter(
        nodes_request(pod_object(pod, "uid-" + pod, 6000), {node_object(node, kT4Registration)}));
  };
  // The template itself is checked (SchedulablePodGroups) without packing anything.
  CHECK(ask("a", kFamily).nodes);
  CHECK(ask("b", kFamily).nodes);
  CHECK(ask("c", kFamily).nodes);
  // Estimation: 6000 MiB pods on 15360 MiB cards, two a node (a third needs
  // 18000). CA asks each pod against its last added node.
  CHECK(ask("a", e0).nodes);
  CHECK(ask("b", e0).nodes);
  const auto c = ask("c", e0);
  CHECK_FALSE(c.nodes);
  CHECK_THAT(c.failed.at(e0), Catch::Contains("CardInsufficientMemory"));
  CHECK(ask("c", e1).nodes);  // a new node for it
  CHECK(ask("d", e1).nodes);
  CHECK_FALSE(ask("e", e1).nodes);
  // The next estimation (or loop) starts over from e-0: pod a again.
  CHECK(ask("a", e0).nodes);
  CHECK(ask("b", e0).nodes);
  CHECK_FALSE(ask("c", e0).nodes);
  // Idle past its expiry, a family starts from zero.
  f.t += std::chrono::seconds(6);
  CHECK(ask("z", e0).nodes);
  CHECK(ask("y", e0).nodes);
  CHECK_FALSE(ask("x", e0).nodes);
  // No packed pod ever reaches the real cluster.
  CHECK(f.state->reservation_count() == 0);
}

TEST_CASE("dry run: an earlier estimator node asked alone keeps what the estimation packed",
          "[serve][dry-run]") {
  // CA's FitsAnyNodeMatching for a later pod shape sends only the added
  // nodes its own filters pass: e-0 alone, e-1 holding pods.
  Fixture f;
  const std::string e0 = kFamily + "-e-0", e1 = kFamily + "-e-1";
  auto ask = [&](const std::string& pod, const std::string& node, int mib) {
    return f.state->filter(
        nodes_request(pod_object(pod, "uid-" + pod, mib), {node_object(node, kT4Registration)}));
  };
  CHECK(ask("a", e0, 6000).nodes);
  CHECK(ask("b", e0, 6000).nodes);
  CHECK(ask("c", e1, 6000).nodes);
  // e-0 holds 12000 of 15360 MiB: 3000 fits, then 400 does not (360 left).
  CHECK(ask("p", e0, 3000).nodes);
  CHECK_FALSE(ask("q", e0, 400).nodes);
  CHECK(ask("r", e1, 4000).nodes);  // e-1 holds 6000
}

TEST_CASE("dry run: two fitting nodes in one request pack nothing (CA's choice is not seen)",
          "[serve][dry-run]") {
  Fixture f;
  const std::string e0 = kFamily + "-e-0", e1 = kFamily + "-e-1";
  auto ask_both = [&](const std::string& pod) {
    return f.state->filter(
        nodes_request(pod_object(pod, "uid-" + pod, 6000),
                      {node_object(e0, kT4Registration), node_object(e1, kT4Registration)}));
  };
  for (const char* pod : {"a", "b", "c", "d"}) {
    const auto r = ask_both(pod);
    REQUIRE(r.nodes);
    CHECK(r.nodes->size() == 2);
  }
}

TEST_CASE("dry run: a malformed registration is that node's reason, not a failed request",
          "[serve][dry-run]") {
  Fixture f;
  FilterOutcome outcome{};
  const auto r =
      f.state->filter(nodes_request(pod_object("pending-0", "p0", 3000),
                                    {node_object(kFamily + "-bad", R"([{"id":"GPU-x","count":"ten"}])"),
                                     node_object(kFamily, kT4Registration)}),
                      &outcome);
  CHECK(outcome == FilterOutcome::DryRun);
  CHECK(r.error.empty());
  REQUIRE(r.nodes);
  CHECK(*r.nodes == std::vector<std::string>{kFamily});
  CHECK_THAT(r.failed.at(kFamily + "-bad"), Catch::StartsWith("node registration unreadable: "));
}

TEST_CASE("dry run: a template scaled from zero without a registration says what it needs",
          "[serve][dry-run]") {
  Fixture f;
  const auto r =
      f.state->filter(nodes_request(pod_object("pending-0", "p0", 3000), {node_object(kFamily, "")}));
  CHECK_FALSE(r.nodes);
  CHECK_THAT(r.failed.at(kFamily), Catch::StartsWith("node unregistered: ") &&
                                       Catch::Contains("hami.io/node-nvidia-register") &&
                                       Catch::Contains("--template-registration"));
}

TEST_CASE("a simulated node named without its object cannot be fitted and the reason says so",
          "[serve][dry-run]") {
  Fixture f;
  FilterOutcome outcome{};
  const auto r =
      f.state->filter(names_request(pod_object("pending-0", "p0", 3000), {kFamily, "nope"}), &outcome);
  CHECK(outcome == FilterOutcome::Unschedulable);  // a names request is a real filter
  CHECK_FALSE(r.nodes);
  CHECK(r.failed.at("nope") == "node unregistered");  // HAMi's text for any other unknown name
  CHECK_THAT(r.failed.at(kFamily), Catch::StartsWith("node unregistered: ") &&
                                       Catch::Contains("without its Node object") &&
                                       Catch::Contains("nodeCacheCapable: false"));
}

TEST_CASE("dry runs interleaved with real filters and binds never change a real answer", "[serve][dry-run]") {
  // The same real requests on two states; one also gets dry runs between
  // them: for the same pods (pending or reserved), other pods, known nodes
  // and template nodes. Under the random policy on three nodes too, whose
  // draws a dry run must not move.
  struct Setup {
    std::string policy, snapshot;
    std::vector<std::string> names;
    int divisor = 1;  // pods this much smaller (the preemption cluster's cards are mostly taken)
  };
  const Setup setup =
      GENERATE(Setup{"hami", "tests/cli/data/kubectl-cluster.yaml", {"control-1", "gpu-t4-1"}},
               Setup{"random", "tests/serve/data/preempt-cluster.yaml", {"gpu-a", "gpu-b", "gpu-c"}, 4},
               Setup{"hami", "tests/serve/data/preempt-cluster.yaml", {"gpu-a", "gpu-b", "gpu-c"}, 4});
  INFO("policy " << setup.policy << " on " << setup.snapshot);
  Fixture plain(setup.snapshot, setup.policy), mixed(setup.snapshot, setup.policy);
  const std::string e0 = kFamily + "-e-0";
  std::vector<std::string> plain_answers, mixed_answers;
  std::map<Fixture*, std::string> placed_on;  // the last real filter's node
  auto real = [&](Fixture& f, std::vector<std::string>& answers, const nlohmann::json& pod) {
    const ExtenderArgs a = names_request(pod, setup.names);
    FilterOutcome o{};
    const ExtenderFilterResult r = f.state->filter(a, &o);
    answers.push_back(encode_filter_result(r, a) + outcome_name(o));
    placed_on[&f] = r.nodes && !r.nodes->empty() ? r.nodes->front() : setup.names.back();
  };
  auto bind = [&](Fixture& f, std::vector<std::string>& answers, const std::string& pod,
                  const std::string& uid) {
    answers.push_back("bind:" + f.state->bind({pod, "default", uid, placed_on[&f]}));
  };
  std::vector<nlohmann::json> known;
  for (const auto& n : setup.names) known.push_back(node_object(n, ""));
  auto dry = [&](const nlohmann::json& pod) {
    std::vector<nlohmann::json> with_template = known, with_broken = known;
    with_template.push_back(node_object(kFamily, kT4Registration));
    with_broken.push_back(node_object(e0, "[broken"));
    for (const auto& nodes :
         {std::vector<nlohmann::json>{node_object(e0, kT4Registration)}, with_template, with_broken}) {
      FilterOutcome o{};
      mixed.state->filter(nodes_request(pod, nodes), &o);
      CHECK(o == FilterOutcome::DryRun);
    }
  };
  auto cards = [](Fixture& f) {
    std::vector<std::tuple<std::string, int64_t, int32_t, int32_t>> out;
    for (const auto& c : f.state->card_use())
      out.emplace_back(c.uuid, c.memory_used_mib, c.cores_used, c.slots_used);
    return out;
  };
  const std::vector<std::pair<std::string, int>> pods = {{"a", 8000},  {"b", 6000}, {"c", 7000}, {"d", 3000},
                                                         {"e", 9000},  {"f", 2000}, {"g", 1000}, {"h", 12000},
                                                         {"i", 14000}, {"j", 5000}};
  for (size_t i = 0; i < pods.size(); ++i) {
    const auto& [name, mib] = pods[i];
    const auto pod = pod_object(name, "uid-" + name, mib / setup.divisor);
    dry(pod);  // pending: CA asks before kube-scheduler does
    real(plain, plain_answers, pod);
    dry(pod);  // reserved: CA asks again
    real(mixed, mixed_answers, pod);
    dry(pod_object("other-" + name, "uid-other-" + name, mib / setup.divisor));
    if (i % 2 == 0) {
      bind(plain, plain_answers, name, "uid-" + name);
      dry(pod);
      bind(mixed, mixed_answers, name, "uid-" + name);
    }
    plain.t += std::chrono::seconds(20);
    mixed.t += std::chrono::seconds(20);
  }
  CHECK(mixed_answers == plain_answers);
  CHECK(cards(mixed) == cards(plain));
  CHECK(mixed.state->reservation_count() == plain.state->reservation_count());
  CHECK(mixed.writer.pod_annotations("default", "a") == plain.writer.pod_annotations("default", "a"));
  CHECK(mixed.writer.pod_annotations("default", "other-a").empty());
  // The answers themselves are what the test means (some placed, some refused).
  CHECK(std::count_if(plain_answers.begin(), plain_answers.end(),
                      [](const std::string& s) { return s.ends_with("placed"); }) >= 3);
  CHECK(std::count_if(plain_answers.begin(), plain_answers.end(),
                      [](const std::string& s) { return s.ends_with("unschedulable"); }) >= 1);
}

TEST_CASE("/metrics counts dry-run filters", "[serve][dry-run]") {
  Fixture f;
  Metrics metrics;
  FilterOutcome o{};
  f.state->filter(nodes_request(pod_object("p", "u", 3000), {node_object(kFamily, kT4Registration)}), &o);
  metrics.observe_filter(o, 0.001);
  f.state->filter(nodes_request(pod_object("p", "u", 3000), {node_object(kFamily, kT4Registration)}), &o);
  metrics.observe_filter(o, 0.001);
  const std::string text = metrics.render(*f.state);
  CHECK_THAT(text, Catch::Contains("gpuslice_dry_run_filters_total 2\n"));
  CHECK_THAT(text, Catch::Contains("gpuslice_filter_decisions_total{reason=\"dry-run\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("gpuslice_filter_decisions_total{reason=\"placed\"} 0\n"));
}

TEST_CASE("dry run: a group scaled from zero takes its registration from --template-registration by labels",
          "[serve][dry-run]") {
  MemoryWriter writer;
  StateOptions o;
  auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  o.clock = [&] { return t; };
  o.template_registrations = parse_template_registrations(
      R"({"templates": [{"labels": {"pool": "t4", "zone": "a"}, "registration": )" + kT4Registration + "}]}",
      "registrations.json");
  DecisionState state(o, writer);
  SnapshotFeed(std::string(GPUSLICE_SOURCE_DIR) + "/tests/cli/data/kubectl-cluster.yaml").start(state);
  auto labelled = [](const std::string& name, nlohmann::json labels, const std::string& registration) {
    nlohmann::json n = node_object(name, registration);
    n["metadata"]["labels"] = std::move(labels);
    return n;
  };
  const std::string e0 = kFamily + "-e-0";
  auto ask = [&](const std::string& pod, const nlohmann::json& node) {
    return state.filter(nodes_request(pod_object(pod, "uid-" + pod, 6000), {node}));
  };
  const nlohmann::json from_zero = labelled(e0, {{"pool", "t4"}, {"zone", "a"}, {"other", "x"}}, "");
  // 15360 MiB cards from the mapping: two 6000 MiB pods, not three.
  CHECK(ask("a", from_zero).nodes);
  CHECK(ask("b", from_zero).nodes);
  const auto c = ask("c", from_zero);
  CHECK_FALSE(c.nodes);
  CHECK_THAT(c.failed.at(e0), Catch::Contains("CardInsufficientMemory"));
  // Labels that do not all match: no registration.
  const auto other = ask("d", labelled(kFamily + "-other", {{"pool", "t4"}}, ""));
  CHECK_THAT(other.failed.at(kFamily + "-other"), Catch::StartsWith("node unregistered"));
  // A template's own registration comes first: one 2000 MiB card refuses 6000 MiB.
  const std::string small =
      R"([{"id":"GPU-small","count":10,"devmem":2000,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core","health":true}])";
  const auto own = ask("e", labelled(kFamily + "-own", {{"pool", "t4"}, {"zone", "a"}}, small));
  CHECK_THAT(own.failed.at(kFamily + "-own"), Catch::Contains("CardInsufficientMemory"));
}

TEST_CASE("the --template-registration file: bad files name the file and the field", "[serve][dry-run]") {
  using gpuslice::core::InputError;
  auto problem = [](const std::string& text) -> std::string {
    try {
      parse_template_registrations(text, "reg.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(problem("{"), Catch::Contains("reg.json") && Catch::Contains("is not JSON"));
  CHECK_THAT(problem(R"({"templates": {}})"), Catch::Contains("templates"));
  CHECK_THAT(problem(R"({"templates": [{"registration": []}]})"), Catch::Contains("templates[0].labels"));
  CHECK_THAT(problem(R"({"templates": [{"labels": {"a": 1}, "registration": "[]"}]})"),
             Catch::Contains("templates[0].labels.a"));
  CHECK_THAT(problem(R"({"templates": [{"labels": {"a": "b"}, "registration": "[]"}]})"),
             Catch::Contains("templates[0].registration") && Catch::Contains("registers no card"));
  CHECK_THAT(problem(R"({"templates": [{"labels": {"a": "b"}, "registration": "not json"}]})"),
             Catch::Contains("templates[0].registration"));
  CHECK(
      problem(R"({"templates": [{"labels": {"a": "b"}, "registration": )" + kT4Registration + "}]}").empty());
}

TEST_CASE("dry run: at most dry_run_max_nodes simulated nodes are kept, the least recently asked going first",
          "[serve][dry-run]") {
  MemoryWriter writer;
  StateOptions o;
  auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  o.clock = [&] { return t; };
  o.dry_run_max_nodes = 2;
  DecisionState state(o, writer);
  SnapshotFeed(std::string(GPUSLICE_SOURCE_DIR) + "/tests/cli/data/kubectl-cluster.yaml").start(state);
  auto ask = [&](const std::string& pod, const std::string& node) {
    t += std::chrono::milliseconds(1);
    return state.filter(
        nodes_request(pod_object(pod, "uid-" + pod, 6000), {node_object(node, kT4Registration)}));
  };
  const std::string a = "template-node-for-a-1-e-0", b = "template-node-for-b-2-e-0",
                    c = "template-node-for-c-3-e-0";
  CHECK(ask("p1", a).nodes);
  CHECK(ask("p2", a).nodes);
  CHECK_FALSE(ask("p3", a).nodes);  // a holds two pods
  CHECK(ask("q1", b).nodes);        // two simulated nodes kept
  CHECK(ask("r1", c).nodes);        // a third: a, asked least recently, goes
  CHECK(ask("p3", a).nodes);        // a from zero again
  // One estimation past the bound forgets its earliest node.
  const std::string d0 = "template-node-for-d-4-e-0", d1 = "template-node-for-d-4-e-1",
                    d2 = "template-node-for-d-4-e-2";
  CHECK(ask("s1", d0).nodes);
  CHECK(ask("s2", d0).nodes);
  CHECK_FALSE(ask("s3", d0).nodes);
  CHECK(ask("s3", d1).nodes);
  CHECK(ask("s4", d2).nodes);  // d-4-e-0 goes (a, b, c went first)
  CHECK(ask("s5", d0).nodes);  // empty again
  CHECK(ask("s6", d0).nodes);
  CHECK_FALSE(ask("s7", d0).nodes);  // and packed again
}

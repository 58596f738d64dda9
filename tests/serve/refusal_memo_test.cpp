// A refused pod's kept answer (refusal_memo.hpp) against the full report
// built afresh: two decision states see the same filters, binds and expiries
// over a mixed fleet; one keeps the last refusal's answer, the other builds
// every refusal afresh (the core's full report, checked elsewhere against
// HAMi's cases). Every answer and event must be the same, while nodes fill,
// empty, and change the reasons a pod is refused for.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <random>

#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/serve/decision_state.hpp"
#include "gpuslice/serve/memory_cluster.hpp"

using namespace gpuslice;
using namespace gpuslice::serve;

namespace {

nlohmann::json node_json(const std::string& name, int cards, const std::string& type, int64_t memory_mib) {
  std::vector<core::Device> devices;
  for (int c = 0; c < cards; ++c) {
    core::Device d;
    d.uuid = fmt::format("GPU-{}-{}", name, c);
    d.index = c;
    d.type = type;
    d.slots = 4;
    d.memory_mib = memory_mib;
    d.cores = 100;
    d.healthy = true;
    devices.push_back(d);
  }
  return {
      {"metadata",
       {{"name", name},
        {"annotations",
         {{std::string(core::codec::kRegisterAnnotation), core::codec::encode_registration_json(devices)}}}}},
      {"status", {{"allocatable", {{"cpu", "64"}, {"memory", "256Gi"}}}}}};
}

ExtenderArgs pod_args(const std::string& name, const std::string& limits,
                      const std::vector<std::string>& nodes) {
  ExtenderArgs a;
  a.pod = nlohmann::json::parse(R"({"metadata":{"name":")" + name + R"(","namespace":"default","uid":")" +
                                name + R"("},"spec":{"containers":[{"name":"main","resources":{"limits":)" +
                                limits + "}}]}}");
  a.node_names = nodes;
  return a;
}

struct Side {
  MemoryWriter writer;
  std::unique_ptr<DecisionState> state;
  Side(bool reuse, const std::vector<nlohmann::json>& nodes,
       const std::chrono::system_clock::time_point* clock) {
    StateOptions o;
    o.reuse_refusals = reuse;
    o.release_lock_after_bind = true;
    o.reservation_ttl = std::chrono::seconds(30);
    o.clock = [clock] { return *clock; };
    state = std::make_unique<DecisionState>(o, writer);
    state->replace_all(nodes, {});
  }
};

std::vector<std::string> messages(const MemoryWriter& w, size_t from) {
  std::vector<std::string> out;
  const auto events = w.events();
  for (size_t i = from; i < events.size(); ++i)
    out.push_back(events[i].type + " " + events[i].reason + " " + events[i].message);
  return out;
}

}  // namespace

TEST_CASE("a kept refusal answers as the full report built afresh while nodes fill and empty",
          "[serve][state][refusal]") {
  // Two shapes of node, so refusals differ by shape and by use.
  std::vector<nlohmann::json> nodes;
  std::vector<std::string> names;
  for (int i = 0; i < 12; ++i) {
    const bool big = i % 3 == 0;
    const std::string name = fmt::format("{}-{:02d}", big ? "a100" : "t4", i);
    nodes.push_back(big ? node_json(name, 4, "NVIDIA-A100-SXM4-40GB", 40960)
                        : node_json(name, 2, "Tesla-T4", 15360));
    names.push_back(name);
  }
  std::vector<std::string> named = names;
  named.push_back("not-a-gpu-node");  // unregistered: named, refused for it
  std::vector<std::string> fewer(names.begin(), names.begin() + 7);

  auto clock = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  Side kept(true, nodes, &clock), afresh(false, nodes, &clock);

  // Small pods fill cards; the large shapes are refused for reasons that
  // change with that use (memory, cores, slots, whole cards), or always.
  const std::vector<std::string> small = {
      R"({"nvidia.com/gpu":"1","nvidia.com/gpumem":"4000","nvidia.com/gpucores":"30"})",
      R"({"nvidia.com/gpu":"1","nvidia.com/gpumem":"9000","nvidia.com/gpucores":"10"})",
      R"({"nvidia.com/gpu":"1","nvidia.com/gpumem":"2000","nvidia.com/gpucores":"50"})"};
  const std::vector<std::string> large = {
      R"({"nvidia.com/gpu":"2","nvidia.com/gpumem":"14000","nvidia.com/gpucores":"60"})",
      R"({"nvidia.com/gpu":"1","nvidia.com/gpumem":"30000","nvidia.com/gpucores":"80"})",
      R"({"nvidia.com/gpu":"4","nvidia.com/gpumem":"20000"})",
      R"({"nvidia.com/gpu":"1","nvidia.com/gpumem":"99999"})"};

  std::mt19937 rng(20261127);
  int refused = 0, placed_large = 0, next = 0;
  std::vector<std::string> unbound;
  for (int step = 0; step < 1500; ++step) {
    const int roll = static_cast<int>(rng() % 100);
    const std::string name = fmt::format("p{}", next++);
    if (roll < 8) {
      clock += std::chrono::seconds(31);  // unbound reservations expire on both sides
      continue;
    }
    const bool is_large = roll >= 45;
    const std::string& limits = is_large ? large[rng() % large.size()] : small[rng() % small.size()];
    const std::vector<std::string>& asked = rng() % 10 == 0 ? fewer : named;
    const size_t kept_events = kept.writer.events().size(), afresh_events = afresh.writer.events().size();
    FilterOutcome ko{}, ao{};
    const ExtenderFilterResult k = kept.state->filter(pod_args(name, limits, asked), &ko);
    const ExtenderFilterResult a = afresh.state->filter(pod_args(name, limits, asked), &ao);
    INFO("step " << step << ", pod " << name << " " << limits);
    REQUIRE(ko == ao);
    REQUIRE(k.nodes == a.nodes);
    REQUIRE(k.error == a.error);
    REQUIRE(k.failed.to_map() == a.failed.to_map());
    // The memory writer keeps its latest events: compare what this filter added.
    if (kept_events < MemoryWriter::kMaxEvents && afresh_events < MemoryWriter::kMaxEvents)
      REQUIRE(messages(kept.writer, kept_events) == messages(afresh.writer, afresh_events));
    if (ko == FilterOutcome::Unschedulable) ++refused;
    if (ko != FilterOutcome::Placed) continue;
    placed_large += is_large;
    // Most small pods are bound (their use stays); the rest expire.
    if (!is_large && rng() % 4 != 0) {
      REQUIRE(kept.state->bind({name, "default", name, k.nodes->front()}) ==
              afresh.state->bind({name, "default", name, a.nodes->front()}));
    }
  }
  // Both paths ran: answers kept and reused, answers rebuilt, pods placed.
  CHECK(refused > 200);
  CHECK(placed_large > 5);
  CHECK(kept.state->refusals_reused_count() > 50);
  CHECK(kept.state->refusals_reused_count() < static_cast<uint64_t>(refused));
  CHECK(afresh.state->refusals_reused_count() == 0);
}

TEST_CASE("a kept refusal is not reused for another shape or another list of names",
          "[serve][state][refusal]") {
  std::vector<nlohmann::json> nodes = {node_json("n1", 2, "Tesla-T4", 15360),
                                       node_json("n2", 2, "Tesla-T4", 15360)};
  auto clock = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  Side side(true, nodes, &clock);
  const std::vector<std::string> both = {"n1", "n2"}, one = {"n1"};
  const std::string too_big = R"({"nvidia.com/gpu":"1","nvidia.com/gpumem":"20000"})";
  FilterOutcome o{};
  auto first = side.state->filter(pod_args("a", too_big, both), &o);
  CHECK(o == FilterOutcome::Unschedulable);
  CHECK(side.state->refusals_reused_count() == 0);
  // The same shape on the same names: the kept answer.
  auto again = side.state->filter(pod_args("b", too_big, both), &o);
  CHECK(side.state->refusals_reused_count() == 1);
  CHECK(again.failed.to_map() == first.failed.to_map());
  // Fewer names: built afresh, and it names only n1.
  auto fewer = side.state->filter(pod_args("c", too_big, one), &o);
  CHECK(side.state->refusals_reused_count() == 1);
  CHECK(fewer.failed.to_map() == std::map<std::string, std::string>{{"n1", first.failed.at("n1")}});
  // Another shape refused for another reason: built afresh.
  const std::string three_cards = R"({"nvidia.com/gpu":"3","nvidia.com/gpumem":"1000"})";
  auto other = side.state->filter(pod_args("d", three_cards, one), &o);
  CHECK(o == FilterOutcome::Unschedulable);
  CHECK(side.state->refusals_reused_count() == 1);
  CHECK(other.failed.at("n1") != fewer.failed.at("n1"));
  // A pod that fits is placed, whatever was kept before.
  auto fits =
      side.state->filter(pod_args("e", R"({"nvidia.com/gpu":"1","nvidia.com/gpumem":"1000"})", one), &o);
  CHECK(o == FilterOutcome::Placed);
  CHECK(fits.nodes == std::vector<std::string>{"n1"});
}

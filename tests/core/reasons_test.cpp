#include "gpuslice/core/reasons.hpp"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

using namespace gpuslice::core;

TEST_CASE("every reason is spelled as HAMi spells it", "[reasons]") {
  CHECK(reason_name(Reason::CardTypeMismatch) == "CardTypeMismatch");
  CHECK(reason_name(Reason::CardUuidMismatch) == "CardUuidMismatch");
  CHECK(reason_name(Reason::CardTimeSlicingExhausted) == "CardTimeSlicingExhausted");
  CHECK(reason_name(Reason::CardComputeUnitsExhausted) == "CardComputeUnitsExhausted");
  CHECK(reason_name(Reason::CardInsufficientMemory) == "CardInsufficientMemory");
  CHECK(reason_name(Reason::CardInsufficientCore) == "CardInsufficientCore");
  CHECK(reason_name(Reason::CardNotHealth) == "CardNotHealth");
  CHECK(reason_name(Reason::CardCordoned) == "CardCordoned");
  CHECK(reason_name(Reason::NumaNotFit) == "NumaNotFit");
  CHECK(reason_name(Reason::ExclusiveDeviceAllocateConflict) == "ExclusiveDeviceAllocateConflict");
  CHECK(reason_name(Reason::ResourceQuotaNotFit) == "ResourceQuotaNotFit");
  CHECK(reason_name(Reason::AllocatedCardsInsufficientRequest) == "AllocatedCardsInsufficientRequest");
  CHECK(reason_name(Reason::NodeInsufficientDevice) == "NodeInsufficientDevice");
}

TEST_CASE("the node reason format sorts entries as strings", "[reasons]") {
  ReasonTally t;
  CHECK(t.empty());
  CHECK(Refusal(t, 2).empty());
  CHECK(Refusal(t, 2).format().empty());
  t.add(Reason::CardTypeMismatch);
  t.add(Reason::CardInsufficientMemory);
  CHECK(Refusal(t, 2).format() == "1/2 CardInsufficientMemory, 1/2 CardTypeMismatch");
  t.add(Reason::CardTypeMismatch, 9);
  // String order, as HAMi's sort.Strings: "1/12 ..." sorts before "10/12 ...".
  CHECK(Refusal(t, 12).format() == "1/12 CardInsufficientMemory, 10/12 CardTypeMismatch");
  t.set(Reason::CardTypeMismatch, 0);
  CHECK(Refusal(t, 12).format() == "1/12 CardInsufficientMemory");
}

TEST_CASE("node-wide reasons carry no count", "[reasons]") {
  Refusal host;
  host.add_node_wide(Reason::InsufficientMemory);
  host.add_node_wide(Reason::InsufficientCpu);
  // kube-scheduler's words, cpu before memory.
  CHECK(host.format() == "Insufficient cpu, Insufficient memory");
  Refusal cards;
  cards.add_node_wide(Reason::NodeInsufficientDevice);
  CHECK(cards.format() == "NodeInsufficientDevice");
  CHECK_FALSE(host == cards);
  CHECK(is_node_wide(Reason::InsufficientCpu));
  CHECK_FALSE(is_node_wide(Reason::CardInsufficientMemory));
}

TEST_CASE("a refusal names its reasons without its text being read back", "[reasons]") {
  ReasonTally t;
  t.add(Reason::CardTypeMismatch, 3);
  t.add(Reason::CardInsufficientMemory);
  const Refusal r(t, 4);
  std::vector<std::string> names;
  r.for_each_reason([&](Reason reason) { names.emplace_back(reason_name(reason)); });
  CHECK(names == std::vector<std::string>{"CardTypeMismatch", "CardInsufficientMemory"});
  // The same counts over another card total are another refusal.
  CHECK_FALSE(r == Refusal(t, 5));
  CHECK(r.hash() == Refusal(t, 4).hash());
}

TEST_CASE("every reason has a name of its own (events group nodes by it)", "[reasons]") {
  std::set<std::string_view> names;
  for (size_t r = 0; r < kReasonCount; ++r) CHECK(names.insert(reason_name(static_cast<Reason>(r))).second);
}

#include "gpuslice/core/reasons.hpp"

#include <catch2/catch.hpp>

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
  t.add(Reason::CardTypeMismatch);
  t.add(Reason::CardInsufficientMemory);
  CHECK(t.format(2) == "1/2 CardInsufficientMemory, 1/2 CardTypeMismatch");
  t.add(Reason::CardTypeMismatch, 9);
  // String order, as HAMi's sort.Strings: "1/12 ..." sorts before "10/12 ...".
  CHECK(t.format(12) == "1/12 CardInsufficientMemory, 10/12 CardTypeMismatch");
  t.set(Reason::CardTypeMismatch, 0);
  CHECK(t.format(12) == "1/12 CardInsufficientMemory");
}

TEST_CASE("reason names are read back from a node reason", "[reasons]") {
  CHECK(parse_reason_names("1/2 CardInsufficientMemory, 1/2 CardTypeMismatch") ==
        std::vector<std::string>{"CardInsufficientMemory", "CardTypeMismatch"});
  CHECK(parse_reason_names("NodeInsufficientDevice") == std::vector<std::string>{"NodeInsufficientDevice"});
  CHECK(parse_reason_names("Insufficient cpu, Insufficient memory") ==
        std::vector<std::string>{"Insufficient cpu", "Insufficient memory"});
  CHECK(parse_reason_names("").empty());
}

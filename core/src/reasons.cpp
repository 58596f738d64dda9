#include "gpuslice/core/reasons.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuslice::core {

std::string_view reason_name(Reason r) {
  switch (r) {
    case Reason::CardTypeMismatch:
      return "CardTypeMismatch";
    case Reason::CardUuidMismatch:
      return "CardUuidMismatch";
    case Reason::CardTimeSlicingExhausted:
      return "CardTimeSlicingExhausted";
    case Reason::CardComputeUnitsExhausted:
      return "CardComputeUnitsExhausted";
    case Reason::CardInsufficientMemory:
      return "CardInsufficientMemory";
    case Reason::CardInsufficientCore:
      return "CardInsufficientCore";
    case Reason::CardNotHealth:
      return "CardNotHealth";
    case Reason::CardCordoned:
      return "CardCordoned";
    case Reason::NumaNotFit:
      return "NumaNotFit";
    case Reason::ExclusiveDeviceAllocateConflict:
      return "ExclusiveDeviceAllocateConflict";
    case Reason::ResourceQuotaNotFit:
      return "ResourceQuotaNotFit";
    case Reason::AllocatedCardsInsufficientRequest:
      return "AllocatedCardsInsufficientRequest";
    case Reason::NodeInsufficientDevice:
      return "NodeInsufficientDevice";
    case Reason::CardMigTopologyInfeasible:
      return "CardMigTopologyInfeasible";
    case Reason::InsufficientCpu:
      return "Insufficient cpu";
    case Reason::InsufficientMemory:
      return "Insufficient memory";
    case Reason::KoordInsufficientGpuDevices:
      return "Insufficient gpu devices";
    case Reason::KoordInsufficientTopologyGpus:
      return "Insufficient GPU Devices";
    case Reason::KoordInsufficientPartitionedGpus:
      return "Insufficient Partitioned GPU Devices";
    case Reason::KoordMissingPartitionTable:
      return "node(s) missing GPU Partition Table";
    case Reason::KoordUnsupportedGpuCount:
      return "node(s) Unsupported number of GPU requests";
    case Reason::KoordIsolationProviderMismatch:
      return "GPUIsolationProviderHAMICore not found on the node";
    case Reason::KaiNotEnoughGpus:
      return "node(s) didn't have enough resources: GPUs";
    case Reason::KaiNotEnoughGpuMemory:
      return "node(s) didn't have enough resources: GPU memory";
    case Reason::KaiNotEnoughCpu:
      return "node(s) didn't have enough resources: CPU cores";
    case Reason::KaiNotEnoughMemory:
      return "node(s) didn't have enough resources: memory";
    case Reason::kCount:
      break;
  }
  return "Unknown";
}

bool ReasonTally::empty() const {
  return std::all_of(counts_.begin(), counts_.end(), [](int c) { return c == 0; });
}

bool is_node_wide(Reason r) {
  return r == Reason::NodeInsufficientDevice || r == Reason::InsufficientCpu ||
         r == Reason::InsufficientMemory || r >= Reason::KoordInsufficientGpuDevices;
}

std::string Refusal::format() const {
  std::vector<std::string> parts;
  for_each_reason([&](Reason r) {
    if (is_node_wide(r))
      parts.emplace_back(reason_name(r));
    else
      parts.push_back(fmt::format("{}/{} {}", tally_.count(r), cards_, reason_name(r)));
  });
  std::sort(parts.begin(), parts.end());
  return fmt::format("{}", fmt::join(parts, ", "));
}

uint64_t Refusal::hash() const {
  // Two counts a step: the explainer hashes a refusal per node it refits.
  uint64_t h = static_cast<uint64_t>(cards_) * 0x9e3779b97f4a7c15ULL;
  size_t i = 0;
  for (; i + 1 < kReasonCount; i += 2) {
    const uint64_t pair =
        static_cast<uint32_t>(tally_.count(static_cast<Reason>(i))) |
        static_cast<uint64_t>(static_cast<uint32_t>(tally_.count(static_cast<Reason>(i + 1)))) << 32;
    h = (h ^ pair) * 0xff51afd7ed558ccdULL;
  }
  if (i < kReasonCount)
    h = (h ^ static_cast<uint32_t>(tally_.count(static_cast<Reason>(i)))) * 0xff51afd7ed558ccdULL;
  return h ^ (h >> 29);
}

}  // namespace gpuslice::core

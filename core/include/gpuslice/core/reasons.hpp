// HAMi's failure reasons, spelled exactly as HAMi spells them, and the
// "<count>/<cards> <Reason>" node reason format.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuslice::core {

enum class Reason : uint8_t {
  CardTypeMismatch,
  CardUuidMismatch,
  CardTimeSlicingExhausted,
  CardComputeUnitsExhausted,
  CardInsufficientMemory,
  CardInsufficientCore,
  CardNotHealth,
  CardCordoned,
  NumaNotFit,
  ExclusiveDeviceAllocateConflict,
  ResourceQuotaNotFit,
  AllocatedCardsInsufficientRequest,
  NodeInsufficientDevice,
  // Host dimensions, as kube-scheduler's NodeResourcesFit words them.
  InsufficientCpu,
  InsufficientMemory,
  kCount
};

inline constexpr size_t kReasonCount = static_cast<size_t>(Reason::kCount);

std::string_view reason_name(Reason r);

// Per-card reason tally of one container's walk over a node's cards.
class ReasonTally {
 public:
  void add(Reason r, int n = 1) { counts_[static_cast<size_t>(r)] += n; }
  void set(Reason r, int n) { counts_[static_cast<size_t>(r)] = n; }
  int count(Reason r) const { return counts_[static_cast<size_t>(r)]; }
  bool empty() const;
  // HAMi GenReason: "<n>/<cards> <Reason>" entries sorted as strings, joined by ", ".
  std::string format(int cards) const;

 private:
  std::array<int, kReasonCount> counts_{};
};

// HAMi ParseReason: the reason names of a formatted node reason.
std::vector<std::string> parse_reason_names(std::string_view formatted);

}  // namespace gpuslice::core

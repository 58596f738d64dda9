// Why a node refuses a pod: HAMi's failure reasons, spelled exactly as HAMi
// spells them, with the "<count>/<cards> <Reason>" node reason format, and
// Koordinator's and KAI's filter messages as their schedulers word them
// (node-wide: they carry no card count).
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
  // HAMi v2.10: no MIG profile holding the request has a free placement.
  CardMigTopologyInfeasible,
  // Host dimensions, as kube-scheduler's NodeResourcesFit words them.
  InsufficientCpu,
  InsufficientMemory,
  // Koordinator's DeviceShare filter (pkg/scheduler/plugins/deviceshare).
  KoordInsufficientGpuDevices,       // "Insufficient gpu devices" (the default allocator)
  KoordInsufficientTopologyGpus,     // "Insufficient GPU Devices" (the topology tree)
  KoordInsufficientPartitionedGpus,  // "Insufficient Partitioned GPU Devices"
  KoordMissingPartitionTable,        // "node(s) missing GPU Partition Table"
  KoordUnsupportedGpuCount,          // "node(s) Unsupported number of GPU requests"
  KoordIsolationProviderMismatch,    // "GPUIsolationProviderHAMICore not found on the node"
  // KAI's fit errors (pkg/scheduler/api/common_info/pod_errors.go).
  KaiNotEnoughGpus,       // "node(s) didn't have enough resources: GPUs"
  KaiNotEnoughGpuMemory,  // "node(s) didn't have enough resources: GPU memory"
  KaiNotEnoughCpu,        // "node(s) didn't have enough resources: CPU cores"
  KaiNotEnoughMemory,     // "node(s) didn't have enough resources: memory"
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
  friend bool operator==(const ReasonTally&, const ReasonTally&) = default;

 private:
  std::array<int, kReasonCount> counts_{};
};

// Reasons about the whole node, not a count of its cards: the host's
// shortfall (kube-scheduler's words) and HAMi's NodeInsufficientDevice.
bool is_node_wide(Reason r);

// Why one node refused a pod, typed. Card reasons carry HAMi's count over
// the node's cards; node-wide reasons carry none. Front ends format it
// (HAMi's FailedNodes text, event messages, the simulator's records); the
// core and the simulator count reasons without reading text back.
class Refusal {
 public:
  Refusal() = default;
  // One container's walk over `cards` cards (HAMi GenReason's input).
  Refusal(const ReasonTally& per_card, int cards) : tally_(per_card), cards_(cards) {}
  void add_node_wide(Reason r) { tally_.set(r, 1); }

  bool empty() const { return tally_.empty(); }
  int count(Reason r) const { return tally_.count(r); }
  // Each reason it holds, in enum order.
  template <typename F>
  void for_each_reason(F visit) const {
    for (size_t i = 0; i < kReasonCount; ++i)
      if (tally_.count(static_cast<Reason>(i)) != 0) visit(static_cast<Reason>(i));
  }
  // HAMi's text: "<n>/<cards> <Reason>" for card reasons, node-wide reasons
  // by name, sorted as strings and joined by ", " (HAMi GenReason).
  std::string format() const;
  uint64_t hash() const;
  friend bool operator==(const Refusal&, const Refusal&) = default;

 private:
  ReasonTally tally_;
  int cards_ = 0;
};

}  // namespace gpuslice::core

// What a run measures, as an observer of its arrivals, placements and
// departures: allocation (count-equivalent by cores, memory, the study's
// milli-GPU), arrived demand, fragmentation, the allocation curve by arrived
// demand, pending times and refusals by HAMi reason.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/fragmentation.hpp"
#include "gpuslice/sim/run_observer.hpp"

namespace gpuslice::sim {

struct TimelineRow {
  double time = 0;
  size_t running = 0, pending = 0, placed = 0, failed = 0;
  double arrived_pct = 0;    // arrived GPU demand (milli) / capacity
  double alloc_gpu_pct = 0;  // allocated milli-GPUs / capacity (the study's ratio)
  double alloc_memory_pct = 0;
  double alloc_cores_pct = 0;
  double busy_cards_pct = 0;  // cards holding at least one slice
  double frag_gpu_pct = 0;    // FGD fragmentation: milli-GPUs typical pods cannot use / capacity
  size_t nodes = 0;           // nodes in the fleet (with node groups: those started or Ready)
};

// Simulated time for a person: "42 s", "12.5 min", "45.6 h", "3 d 4 h".
std::string human_duration(double seconds);

class Metrics final : public RunObserver {
 public:
  static constexpr int kArrivedPoints = 131;  // 0..130 %

  // milli_from_trace: the GPU allocated is the sum of the placed pods'
  // declared gpu_milli (the study's measure, for openb traces). Otherwise it
  // is measured per card: the larger of its used share of cores and of
  // memory, so it never passes a card's capacity whatever the card's size.
  // Fragmentation is measured with `fragmentation` (FGD's typical pods),
  // from the fleet's state now on.
  Metrics(const core::Cluster& fleet, bool milli_from_trace,
          std::shared_ptr<core::FragmentationModel> fragmentation);
  void arrived(double time, const PodSpec& pod) override;
  void placed(const PodMove& move) override;
  void departed(const PodMove& move) override;
  // One record of the study's curves: call after each arrival is handled
  // (and once before the first).
  void observe_curve();
  void pending_time(double seconds) { pending_.push_back(seconds); }
  void refused(const std::string& reason) { ++refusals_[reason]; }

  TimelineRow row(double time, size_t running, size_t pending, size_t placed, size_t failed) const;
  // Element i: the allocation ratio (%) at i % arrived, as the study's
  // analysis reads it (experiments/analysis/merge_alloc_discrete.py): the
  // mean, rounded to 2 decimals, of the records' ratios (each rounded to 2
  // decimals) whose arrived share rounds (half to even) to i; when none
  // does, of those that round to i - 1 or i + 1; empty when neither.
  std::array<std::optional<double>, kArrivedPoints> alloc_by_arrived() const;
  // The same for fragmentation (% of capacity; merge_frag_discrete.py).
  std::array<std::optional<double>, kArrivedPoints> frag_by_arrived() const;
  double percentile_pending(double p) const;  // seconds, over placed pods
  double max_pending() const;
  const std::map<std::string, size_t>& refusals() const { return refusals_; }
  double arrived_pct() const;
  double alloc_gpu_pct() const;
  // Runs where pods come and go: allocation held over simulated time. Call
  // with each event's time before the event changes anything.
  void advance(double now);
  struct Held {
    double gpu_pct = 0, memory_pct = 0, cores_pct = 0;  // time-weighted means (at `now` when no time passed)
    double peak_gpu_pct = 0, peak_memory_pct = 0, peak_cores_pct = 0;
  };
  Held held(double now) const;
  int64_t capacity_milli() const { return capacity_milli_; }
  // A node group's node joins (Ready) or leaves the fleet: percentages are
  // of the nodes present. A node leaves empty; one absent holds no fragment.
  void node_present(const core::Cluster& cluster, size_t node, bool present);

 private:
  int64_t capacity_milli_ = 0, capacity_memory_ = 0, capacity_cores_ = 0;
  int64_t arrived_milli_ = 0, allocated_milli_ = 0, allocated_memory_ = 0, allocated_cores_ = 0;
  int64_t busy_cards_ = 0, cards_ = 0;
  // Fragments are summed in integer millionths of a milli-GPU: a running
  // double sum would drift, and an emptied fleet would not read 0 %.
  std::shared_ptr<core::FragmentationModel> fragmentation_;
  std::vector<int64_t> node_fragment_;  // per node
  int64_t fragment_total_ = 0;
  void fragment_changed(const core::Cluster& cluster, size_t node);
  double fragment_milli() const;
  double last_time_ = 0, area_gpu_ = 0, area_memory_ = 0, area_cores_ = 0;
  double peak_gpu_ = 0, peak_memory_ = 0, peak_cores_ = 0;
  void observe_peaks();
  std::vector<int32_t> card_holders_;  // slices per card, flat over the fleet
  std::vector<uint32_t> first_card_;
  bool milli_from_trace_ = false;
  struct CardUse {
    int64_t memory_mib = 0, memory_used = 0;
    int32_t cores = 0, cores_used = 0;
    int64_t milli() const;  // the binding dimension's used share, 0..1000
  };
  std::vector<CardUse> card_use_;  // flat over the fleet, as card_holders_
  void charge_cards(size_t node, const core::PodAllocation& allocation, int sign);
  // Per arrived bucket 0..kArrivedPoints (one past, for the neighbour rule):
  // record count, sum of rounded allocation ratios, sum of fragment ratios.
  struct Bucket {
    size_t records = 0;
    double alloc = 0, frag = 0;
  };
  std::array<Bucket, kArrivedPoints + 1> buckets_{};
  std::array<std::optional<double>, kArrivedPoints> read_curve(double Bucket::*field, bool percent) const;
  mutable std::vector<double> pending_;
  mutable bool pending_sorted_ = false;
  std::map<std::string, size_t> refusals_;
};

}  // namespace gpuslice::sim

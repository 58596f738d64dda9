// card_use.csv's rows, as an observer: each card a placement or a departure
// changed, with its use right after.
#pragma once

#include <vector>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/sim/run_observer.hpp"
#include "gpuslice/sim/simulator.hpp"

namespace gpuslice::sim {

class CardUseLog final : public RunObserver {
 public:
  explicit CardUseLog(std::vector<CardUseRow>& rows) : rows_(rows) {}
  void placed(const PodMove& move) override { record(move); }
  void departed(const PodMove& move) override { record(move); }

 private:
  void record(const PodMove& move) {
    const auto use = move.cluster.usage(move.node);
    const auto& devices = move.cluster.node(move.node).devices;
    for (const auto& c : core::effective_charges(move.allocation))
      rows_.push_back({move.time, static_cast<uint32_t>(move.node), c.device,
                       use[static_cast<size_t>(c.device)],
                       devices[static_cast<size_t>(c.device)].memory_mib});
  }

  std::vector<CardUseRow>& rows_;
};

}  // namespace gpuslice::sim

// MIG instances as HAMi v2.10.0 places them (pkg/device/nvidia/device.go
// selectMigCandidate, mig_topology.go selectMigPlacement): the smallest
// profile holding the memory asked that has a free placement, placements
// tried high-first for 1g./3g. profiles and low-first for the rest. Greedy,
// one instance at a time, as v2.10.0 is (HAMi's main branch has since
// changed the order: docs/hami-differences.md).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gpuslice/core/model.hpp"

namespace gpuslice::core {

// A profile (position in the card's mig_profiles) and where it would sit.
struct MigChoice {
  int32_t profile = -1;
  MigPlacement placement;
};

// Slices taken on a card, one bit per slice, from DeviceUsage::mig_slices.
uint32_t mig_taken_mask(uint64_t slice_counts);
// The slices a placement covers, one bit per slice.
uint32_t mig_placement_mask(MigPlacement p);
// One instance on each slice a placement covers, in DeviceUsage::mig_slices' lanes.
uint64_t mig_slice_counts(MigPlacement p);

// HAMi selectMigCandidate: profiles by memory then slice count (stable:
// registration order breaks ties), the first with memory >= `memory_mib`
// and a placement clear of `taken` (a slice mask). None: nullopt.
std::optional<MigChoice> select_mig_candidate(const std::vector<MigProfile>& profiles, uint32_t taken,
                                              int64_t memory_mib);

// Whether a card's usage leaves room for one more instance holding `memory_mib`.
inline bool mig_has_room(const Device& dev, const DeviceUsage& used, int64_t memory_mib) {
  return select_mig_candidate(dev.mig_profiles, mig_taken_mask(used.mig_slices), memory_mib).has_value();
}

// How many instances holding `memory_mib` each a card's free slices take,
// one after another as HAMi's Fit revisits the card.
int mig_instance_count(const Device& dev, const DeviceUsage& used, int64_t memory_mib);

}  // namespace gpuslice::core

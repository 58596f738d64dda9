#include "gpuslice/core/mig.hpp"

#include <algorithm>
#include <numeric>

namespace gpuslice::core {

namespace {

// HAMi preferHighMigPlacement: the name's prefix decides ("1g.10gb+me"
// counts, a bare "1g" does not).
bool prefers_high_placement(const std::string& name) {
  return name.starts_with("1g.") || name.starts_with("3g.");
}

// HAMi selectMigPlacement for one profile: its placements, high-first or
// low-first by start (stable), the first clear of `taken`.
std::optional<MigPlacement> first_free_placement(const MigProfile& profile, uint32_t taken) {
  const bool high_first = prefers_high_placement(profile.name);
  std::optional<MigPlacement> best;
  // The stable sort's first clear entry: the clear placement with the
  // highest (or lowest) start, the earliest registered among equal starts.
  for (const auto& p : profile.placements) {
    // A placement of no slice on the card (registrations refuse them; a
    // model built in code may hold one) would never fill the card.
    const uint32_t mask = mig_placement_mask(p);
    if (mask == 0 || (mask & taken) != 0) continue;
    if (!best || (high_first ? p.start > best->start : p.start < best->start)) best = p;
  }
  return best;
}

}  // namespace

uint32_t mig_taken_mask(uint64_t slice_counts) {
  uint32_t mask = 0;
  for (uint32_t k = 0; k < kMigSlices; ++k)
    if (((slice_counts >> (8 * k)) & 0xffu) != 0) mask |= 1u << k;
  return mask;
}

uint32_t mig_placement_mask(MigPlacement p) {
  uint32_t mask = 0;
  for (uint32_t k = p.start; k < p.start + p.size && k < kMigSlices; ++k) mask |= 1u << k;
  return mask;
}

uint64_t mig_slice_counts(MigPlacement p) {
  uint64_t lanes = 0;
  for (uint32_t k = p.start; k < p.start + p.size && k < kMigSlices; ++k) lanes |= uint64_t{1} << (8 * k);
  return lanes;
}

std::optional<MigChoice> select_mig_candidate(const std::vector<MigProfile>& profiles, uint32_t taken,
                                              int64_t memory_mib) {
  std::vector<int32_t> order(profiles.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const auto& pa = profiles[static_cast<size_t>(a)];
    const auto& pb = profiles[static_cast<size_t>(b)];
    if (pa.memory_mib != pb.memory_mib) return pa.memory_mib < pb.memory_mib;
    return pa.slice_count < pb.slice_count;
  });
  for (int32_t i : order) {
    const MigProfile& candidate = profiles[static_cast<size_t>(i)];
    if (candidate.memory_mib < memory_mib) continue;
    // HAMi looks the placements up by name: the first profile of that name.
    const auto same_name = std::find_if(profiles.begin(), profiles.end(),
                                        [&](const MigProfile& p) { return p.name == candidate.name; });
    // The grant carries this profile's numbers (AddResourceUsage).
    if (auto placement = first_free_placement(*same_name, taken)) return MigChoice{i, *placement};
  }
  return std::nullopt;
}

int mig_instance_count(const Device& dev, const DeviceUsage& used, int64_t memory_mib) {
  uint32_t taken = mig_taken_mask(used.mig_slices);
  int count = 0;
  while (auto choice = select_mig_candidate(dev.mig_profiles, taken, memory_mib)) {
    taken |= mig_placement_mask(choice->placement);
    ++count;
  }
  return count;
}

}  // namespace gpuslice::core

// What HAMi v2.10's device plugin registers for a card in MIG mode
// (pkg/device-plugin/nvidiadevice/nvinternal/plugin/register.go,
// getAPIDevices and discoverMigProfiles), generated from the card's NVML
// facts, so a fleet described by card facts (a scenario's `fleet:`) can
// hold MIG-mode cards as a node's own registration would show them.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "gpuslice/core/dialects/hami/device_config.hpp"
#include "gpuslice/core/model.hpp"

namespace gpuslice::core::codec {

// One GPU instance profile as NVML reports it for a card
// (GetGpuInstanceProfileInfo, GetGpuInstancePossiblePlacements): the plain
// N-slice profile HAMi asks for each allowlisted name's "<N>g" key.
struct MigInstanceFacts {
  uint32_t slices = 0;          // SliceCount; also the key: 1 for "1g.*"
  int32_t memory_mib = 0;       // MemorySizeMB
  int32_t multiprocessors = 0;  // MultiprocessorCount
  uint32_t instances = 0;       // InstanceCount: the most of it a card holds
  std::vector<MigPlacement> placements{};
  friend bool operator==(const MigInstanceFacts&, const MigInstanceFacts&) = default;
};

// The NVML facts gpuslice knows for a card model, by a substring of its
// name; null when it knows none (give them explicitly then).
const std::vector<MigInstanceFacts>* known_mig_facts(std::string_view card_name);

// A MIG-mode card's registration fields: `count` (the most instances of any
// registered profile) and `migProfiles`.
struct MigRegistration {
  int32_t count = 0;
  std::vector<MigProfile> profiles{};
};

// HAMi discoverMigProfiles: the first allowlist entry naming a substring of
// `card_type` gives the profile names, in its order; each takes the NVML
// facts of the instance profile of its "<N>g" key (a name whose key is not
// 1g..8g, or that the card lacks, is skipped as HAMi skips it); core is
// ceil(multiprocessors x 100 / the largest profile's). No entry, or no
// profile left: no profiles, and HAMi does not register the card.
MigRegistration discover_mig_profiles(std::string_view card_type, const std::vector<MigInstanceFacts>& facts,
                                      const DeviceConfig& config);

}  // namespace gpuslice::core::codec

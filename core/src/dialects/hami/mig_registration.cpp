#include "gpuslice/core/dialects/hami/mig_registration.hpp"

#include <algorithm>
#include <string>

namespace gpuslice::core::codec {

namespace {

std::vector<MigPlacement> one_slice_placements(uint32_t n) {
  std::vector<MigPlacement> out;
  for (uint32_t s = 0; s < n; ++s) out.push_back({s, 1});
  return out;
}

// H100 SXM5 80GB (NVML name "NVIDIA H100 80GB HBM3", 132 SMs): memory and
// SM counts as `nvidia-smi mig -lgip` prints them on such a card (a public
// capture: GiB with two decimals, 9.75, 19.62, 39.50, 79.25, read as 9984,
// 20096, 40448, 81152 MiB: 19.62 means 20086 to 20096 MiB; SMs 16, 32, 60,
// 64, 132), the plain N-slice profiles only (1g.10gb+me and 1g.20gb are
// other profile ids HAMi never asks for). Placements: the 8-memory-slice
// geometry NVIDIA's MIG user guide draws for A100 and H100 ({0..6}:1,
// {0,2,4}:2, {0,4}:4, {0}:4, {0}:8; a real A100 lists its 3g instances at
// 0:4 and 4:4, and HAMi's mig_topology_test.go uses the same). They register
// as examples/mig/h100-mig-node.yaml shows (cores 13, 25, 46, 100).
const std::vector<MigInstanceFacts>& h100_80gb() {
  static const std::vector<MigInstanceFacts> facts = {
      {1, 9984, 16, 7, one_slice_placements(7)},
      {2, 20096, 32, 3, {{0, 2}, {2, 2}, {4, 2}}},
      {3, 40448, 60, 2, {{0, 4}, {4, 4}}},
      {4, 40448, 64, 1, {{0, 4}}},
      {7, 81152, 132, 1, {{0, 8}}},
  };
  return facts;
}

// HAMi profileSliceKey: the text before the first '.', which must be one
// of the GPU instance profile keys discoverMigProfiles knows.
uint32_t slice_key(std::string_view name) {
  const std::string_view head = name.substr(0, name.find('.'));
  for (const uint32_t n : {1u, 2u, 3u, 4u, 6u, 7u, 8u})
    if (head == std::to_string(n) + "g") return n;
  return 0;
}

}  // namespace

const std::vector<MigInstanceFacts>* known_mig_facts(std::string_view card_name) {
  for (std::string_view key : {"H100 80GB HBM3", "H100-SXM5-80GB"})
    if (card_name.find(key) != std::string_view::npos) return &h100_80gb();
  return nullptr;
}

MigRegistration discover_mig_profiles(std::string_view card_type, const std::vector<MigInstanceFacts>& facts,
                                      const DeviceConfig& config) {
  MigRegistration out;
  const MigAllowlistEntry* entry = mig_allowlist_entry(config, card_type);
  if (!entry) return out;
  // fullGPUMultiprocessors: the largest over the card's instance profiles.
  int32_t full = 0;
  for (const auto& f : facts)
    if (slice_key(std::to_string(f.slices) + "g") != 0) full = std::max(full, f.multiprocessors);
  for (const std::string& name : entry->profiles) {
    const uint32_t key = slice_key(name);
    if (key == 0) continue;
    auto f = std::find_if(facts.begin(), facts.end(),
                          [key](const MigInstanceFacts& x) { return x.slices == key; });
    if (f == facts.end()) continue;
    MigProfile p;
    p.name = name;
    p.memory_mib = f->memory_mib;
    p.cores = full > 0 ? static_cast<int32_t>((int64_t{f->multiprocessors} * 100 + full - 1) / full) : 0;
    p.slice_count = f->slices;
    p.placements = f->placements;
    out.profiles.push_back(std::move(p));
    out.count = std::max(out.count, static_cast<int32_t>(f->instances));
  }
  return out;
}

}  // namespace gpuslice::core::codec

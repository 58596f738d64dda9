#include "dialects/hami/placed_mig.hpp"

#include <algorithm>
#include <set>

#include "gpuslice/core/dialects/hami/mig_allocations.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core {

namespace {

int card_position(const Node& node, std::string_view uuid) {
  for (size_t i = 0; i < node.devices.size(); ++i)
    if (node.devices[i].uuid == uuid) return static_cast<int>(i);
  return -1;
}

int profile_position(const Device& dev, std::string_view name) {
  for (size_t i = 0; i < dev.mig_profiles.size(); ++i)
    if (dev.mig_profiles[i].name == name) return static_cast<int>(i);
  return -1;
}

// A grant takes a reservation's instance. A profile the card does not
// register (or no longer does) keeps the placement, as HAMi keeps it, with
// the grant's own numbers.
void attach(const Device& dev, const codec::MigReservation& r, DeviceGrant& grant) {
  grant.mig_profile = profile_position(dev, r.profile);
  grant.mig_placement = r.placement;
}

}  // namespace

std::string read_mig_reservations(const Node& node, std::string_view annotation, PodAllocation& allocation) {
  std::vector<codec::MigReservation> reservations;
  std::string error;
  try {
    reservations = codec::decode_mig_allocations(annotation);
  } catch (const CodecError& e) {
    error = e.what();  // HAMi swallows it: the pod has no reservation, and fails closed below
  }
  std::set<int> closes;
  std::vector<bool> paired(reservations.size(), false);
  std::set<int> held;  // cards the pod holds grants on
  for (const auto& container : allocation.containers)
    for (const auto& g : container) held.insert(g.device);

  // Reservations on cards the node lacks close every MIG-mode card of it;
  // on a card not in MIG mode, that card.
  for (size_t i = 0; i < reservations.size(); ++i) {
    const int card = card_position(node, reservations[i].gpu_uuid);
    if (card < 0) {
      for (size_t d = 0; d < node.devices.size(); ++d)
        if (node.devices[d].is_mig()) closes.insert(static_cast<int>(d));
      paired[i] = true;
    } else if (!node.devices[static_cast<size_t>(card)].is_mig()) {
      closes.insert(card);
      paired[i] = true;
    }
  }
  // A MIG-mode card the pod holds that no reservation names is closed.
  for (int card : held) {
    if (!node.devices[static_cast<size_t>(card)].is_mig()) continue;
    const auto& uuid = node.devices[static_cast<size_t>(card)].uuid;
    if (std::none_of(reservations.begin(), reservations.end(),
                     [&](const codec::MigReservation& r) { return r.gpu_uuid == uuid; }))
      closes.insert(card);
  }
  // Each grant on a MIG-mode card takes the reservation written for it
  // (same container, same position, same card), then any left on its card
  // in annotation order; reservations no grant takes still hold their slices.
  auto on_card = [&](const codec::MigReservation& r, const DeviceGrant& g) {
    return r.gpu_uuid == node.devices[static_cast<size_t>(g.device)].uuid;
  };
  for (size_t c = 0; c < allocation.containers.size(); ++c)
    for (size_t k = 0; k < allocation.containers[c].size(); ++k) {
      DeviceGrant& g = allocation.containers[c][k];
      if (!node.devices[static_cast<size_t>(g.device)].is_mig()) continue;
      for (size_t i = 0; i < reservations.size(); ++i)
        if (!paired[i] && on_card(reservations[i], g) &&
            reservations[i].container_index == static_cast<int64_t>(c) &&
            reservations[i].device_index == static_cast<int64_t>(k)) {
          attach(node.devices[static_cast<size_t>(g.device)], reservations[i], g);
          paired[i] = true;
          break;
        }
    }
  for (auto& container : allocation.containers)
    for (auto& g : container) {
      if (g.mig_placement.size != 0 || !node.devices[static_cast<size_t>(g.device)].is_mig()) continue;
      for (size_t i = 0; i < reservations.size(); ++i)
        if (!paired[i] && on_card(reservations[i], g)) {
          attach(node.devices[static_cast<size_t>(g.device)], reservations[i], g);
          paired[i] = true;
          break;
        }
    }
  for (size_t i = 0; i < reservations.size(); ++i)
    if (!paired[i])
      allocation.mig_held.push_back(
          {card_position(node, reservations[i].gpu_uuid), reservations[i].placement});
  allocation.closes_cards.assign(closes.begin(), closes.end());
  return error;
}

}  // namespace gpuslice::core

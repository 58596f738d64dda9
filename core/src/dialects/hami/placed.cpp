// HAMi's placed pods, as its scheduler counts them (pkg/scheduler/
// scheduler.go onAddPod and getNodesUsage): hami.io/vgpu-node names the
// node, hami.io/vgpu-devices-allocated the grants, whether or not
// Kubernetes has bound the pod yet.
#include "dialects/hami/placed.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "dialects/hami/placed_mig.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/hami/mig_allocations.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::dialects {

namespace {

class HamiPlacedReading final : public PlacedReading {
 public:
  explicit HamiPlacedReading(PlacedContext& c) : c_(c) {}

  bool claims(const codec::PodDocument& doc, std::optional<size_t>) const override {
    return !doc.assigned_node.empty();
  }

  void read(size_t i) override {
    PlacedPod& p = c_.out[i];
    const codec::PodDocument& doc = c_.docs[p.doc];
    const std::string name = doc.request.ns + "/" + doc.request.name;
    auto id = c_.cluster.find(doc.assigned_node);
    if (!id) {
      p.role = PlacedRole::UnknownNode;
      c_.warnings.push_back(
          fmt::format("{}:{}: pod '{}' runs on node '{}', which is not in the node list: not counted",
                      c_.source, doc.line, name, doc.assigned_node));
      return;
    }
    const int allocated_line = doc.allocated_line ? doc.allocated_line : doc.line;
    codec::AllocationText text;
    try {
      text = codec::decode_allocation_text(doc.allocated);
    } catch (const CodecError& e) {
      throw InputError(c_.source, allocated_line, "metadata.annotations.hami.io/vgpu-devices-allocated",
                       fmt::format("pod '{}': {}", name, e.what()));
    }
    const Node& node = c_.cluster.node(*id);
    for (auto& container : text) {
      std::erase_if(container, [&](const codec::GrantText& g) {
        for (const auto& d : node.devices)
          if (d.uuid == codec::card_of(g.uuid)) return false;
        c_.warnings.push_back(
            fmt::format("{}:{}: pod '{}' holds card '{}', which is not registered on node '{}': not counted",
                        c_.source, allocated_line, name, g.uuid, node.name));
        return true;
      });
    }
    p.role = PlacedRole::Hami;
    p.node = *id;
    p.allocation = codec::resolve_allocation(text, node, doc.request.init_containers.size());
    const std::string mig_error = read_mig_reservations(node, doc.mig_allocations, p.allocation);
    if (!mig_error.empty() || !p.allocation.closes_cards.empty())
      c_.warnings.push_back(fmt::format(
          "{}:{}: metadata.annotations.{}: pod '{}': {}{} card(s) closed while it runs, as HAMi fails closed",
          c_.source, doc.mig_allocations_line ? doc.mig_allocations_line : allocated_line,
          codec::kMigAllocationsAnnotation, name, mig_error.empty() ? "" : mig_error + "; ",
          p.allocation.closes_cards.size()));
  }

 private:
  PlacedContext& c_;
};

}  // namespace

std::unique_ptr<PlacedReading> hami_placed_reading(PlacedContext& context) {
  return std::make_unique<HamiPlacedReading>(context);
}

}  // namespace gpuslice::core::dialects

// The objects besides Nodes and Pods that give a dump's nodes their cards
// and complete its pods' requests (each unit's own kinds in its box), and
// every dialect's use of them.
#include <fmt/format.h>

#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/kai/codec.hpp"

namespace gpuslice::core::dialects {

namespace {

struct KeptKind {
  ObjectKind kind;
  size_t unit;  // registry position
};
const std::vector<KeptKind>& kept_kinds() {
  static const std::vector<KeptKind> kinds = [] {
    std::vector<KeptKind> out;
    for (size_t u = 0; u < all().size(); ++u)
      for (const ObjectKind& k : all()[u]->object_kinds()) out.push_back({k, u});
    return out;
  }();
  return kinds;
}

class UnitHeldReading final : public PlacedReading {
 public:
  explicit UnitHeldReading(PlacedContext& context) : c_(context) {}
  bool claims(const codec::PodDocument& doc, std::optional<size_t> bound) const override {
    return bound && doc.unit_held.has_value();
  }
  void read(size_t i) override {
    PlacedPod& p = c_.out[i];
    p.role = PlacedRole::UnitHeld;
    p.allocation = *c_.docs[i].unit_held;
  }

 private:
  PlacedContext& c_;
};

}  // namespace

std::optional<size_t> keeper_of(std::string_view group, std::string_view kind) {
  for (const KeptKind& k : kept_kinds())
    if (k.kind.kind == kind && k.kind.group == group) return k.unit;
  return std::nullopt;
}

NodeObjects::NodeObjects(Reading reading) {
  boxes_.reserve(all().size());
  for (const DialectUnit* unit : all())
    boxes_.push_back(reading == Reading::NodesOnly && unit->holds_through_objects() ? nullptr
                                                                                    : unit->make_objects());
}

bool NodeObjects::take(const codec::KubeObject& object, const codec::ReadContext& context) {
  if (const auto* device = std::get_if<codec::DeviceObject>(&object)) {
    devices.push_back(codec::device_document(*device, context));
    return true;
  }
  if (const auto* kept = std::get_if<codec::ResourceObject>(&object)) {
    const auto unit = keeper_of(api_group(kept->header.api_version), kept->header.kind);
    if (!unit || !boxes_[*unit]) return false;
    boxes_[*unit]->take(*kept, context);
    return true;
  }
  return false;
}

const UnitObjects* NodeObjects::box(Dialect id) const {
  for (size_t u = 0; u < all().size(); ++u)
    if (all()[u]->id() == id) return boxes_[u].get();
  return nullptr;
}

std::unique_ptr<PlacedReading> unit_held_reading(PlacedContext& context) {
  return std::make_unique<UnitHeldReading>(context);
}

void complete_requests(RequestCompletion& completion) {
  for (const DialectUnit* unit : all()) unit->complete_requests(completion);
}

void register_nodes(std::vector<codec::NodeDocument>& nodes, const NodeObjects& objects,
                    const std::string& source, std::vector<std::string>& warnings) {
  NodeRegistration registration{nodes, objects, source, warnings};
  for (const DialectUnit* unit : all()) unit->register_nodes(registration);
  std::string ways;
  for (const DialectUnit* unit : all())
    ways += fmt::format("{}{}", ways.empty() ? "" : ", ", unit->registers_by());
  for (const codec::NodeDocument& n : nodes)
    if (unregistered(n) && (n.allocatable_gpus.value_or(0) > 0 || n.labels.contains(codec::kGfdGpuCount)))
      warnings.push_back(fmt::format("{}:{}: node '{}' has GPUs but none of {}: no card counted", source,
                                     n.line, n.node.name, ways));
}

}  // namespace gpuslice::core::dialects

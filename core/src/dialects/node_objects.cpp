// The objects besides Nodes and Pods that give a dump's nodes their cards
// and complete its pods' requests, and every dialect's use of them.
#include <fmt/format.h>

#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/dialects/kai/codec.hpp"

namespace gpuslice::core::dialects {

bool NodeObjects::take(const codec::KubeObject& object, const codec::ReadContext& context) {
  if (const auto* device = std::get_if<codec::DeviceObject>(&object)) {
    devices.push_back(codec::device_document(*device, context));
    return true;
  }
  if (const auto* resource = std::get_if<codec::ResourceObject>(&object)) {
    dra::add_resource_object(*resource, context, dra);
    return true;
  }
  return false;
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

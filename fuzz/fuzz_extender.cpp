// The extender's request decoders (ExtenderArgs, ExtenderBindingArgs,
// ExtenderPreemptionArgs) on arbitrary bodies: a ProtocolError or a decoded
// request, nothing else.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gpuslice/serve/preemption_protocol.hpp"
#include "gpuslice/serve/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  try {
    auto args = gpuslice::serve::decode_extender_args(body);
    gpuslice::serve::ExtenderFilterResult result;
    result.nodes = args.node_names;
    (void)gpuslice::serve::encode_filter_result(result, args);
  } catch (const gpuslice::serve::ProtocolError&) {
  }
  try {
    (void)gpuslice::serve::decode_binding_args(body);
  } catch (const gpuslice::serve::ProtocolError&) {
  }
  try {
    const auto preempt = gpuslice::serve::decode_preemption_args(body);
    gpuslice::serve::ExtenderPreemptionResult result;
    for (const auto& node : preempt.nodes) {
      auto& answer = result.nodes.emplace_back();
      answer.node = node.node;
      for (const auto& pod : node.pods) answer.uids.push_back(pod.uid);
    }
    (void)gpuslice::serve::encode_preemption_result(result);
  } catch (const gpuslice::serve::ProtocolError&) {
  }
  return 0;
}

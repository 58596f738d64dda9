// The extender's request decoders (ExtenderArgs, ExtenderBindingArgs) on
// arbitrary bodies: a ProtocolError or a decoded request, nothing else.
#include <cstddef>
#include <cstdint>
#include <string_view>

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
  return 0;
}

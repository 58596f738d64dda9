// Any text as hami.io/vgpu-devices-allocated: decoded or refused, never a crash.
#include <cstdint>
#include <string_view>

#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/errors.hpp"

using namespace gpuslice::core;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Node node;
  node.name = "n";
  for (const char* u : {"A", "B", "GPU-0"}) {
    Device d;
    d.uuid = u;
    node.devices.push_back(d);
  }
  try {
    auto parsed = codec::decode_allocation_text(text);
    auto alloc = codec::resolve_allocation(parsed, node, 1);
    (void)effective_charges(alloc);
    auto reparsed = codec::decode_allocation_text(codec::encode_allocation(alloc, node));
    if (reparsed.size() != parsed.size()) __builtin_trap();
  } catch (const CodecError&) {
  }
  return 0;
}

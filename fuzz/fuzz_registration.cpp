// Any text as a node registration or pair-score annotation: decoded or
// refused with CodecError, never a crash; what decodes re-encodes and decodes
// to the same cards (names may lose bytes that are not UTF-8).
#include <cstdint>
#include <string_view>

#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/core/errors.hpp"

using namespace gpuslice::core;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto devices = codec::decode_registration(text);
    auto again = codec::decode_registration(codec::encode_registration_json(devices));
    if (again.size() != devices.size()) __builtin_trap();
    for (size_t i = 0; i < devices.size(); ++i)
      if (again[i].slots != devices[i].slots || again[i].memory_mib != devices[i].memory_mib)
        __builtin_trap();
    (void)codec::decode_pair_scores(text, devices);
  } catch (const CodecError&) {
  }
  return 0;
}

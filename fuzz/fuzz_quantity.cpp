// Any text as a Kubernetes quantity: a value or CodecError, never a crash or overflow.
#include <cstdint>
#include <string_view>

#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/errors.hpp"

using namespace gpuslice::core;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)codec::parse_quantity_milli(text);
  } catch (const CodecError&) {
  }
  try {
    (void)codec::parse_quantity_value(text);
  } catch (const CodecError&) {
  }
  try {
    (void)codec::parse_quantity_integer(text);
  } catch (const CodecError&) {
  }
  return 0;
}

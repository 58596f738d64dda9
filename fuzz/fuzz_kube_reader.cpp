// Any bytes through the one reader of Kubernetes objects: as a dump (JSON
// or YAML, whichever the bytes look like), as the same bytes forced through
// YAML (JSON is YAML too) and as an API watch line. Read or refused with an
// InputError naming where, never a crash, a hang or unbounded memory; a
// decoded object's positions all resolve to a line of the text.
#include <cstdint>
#include <string>
#include <string_view>

#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/errors.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::codec;

namespace {

void read_as(std::string_view text, const char* source) {
  try {
    const KubeText t = KubeText::from_string(text, source);
    ReadOptions options;
    options.default_kind = "Pod";
    read_kube_objects(
        t,
        [&](KubeObject&& object, const ReadContext& context) {
          const ObjectHeader& h = header_of(object);
          if (context.line_of(h.at) < 0) __builtin_trap();
          if (h.meta.name.present() && context.line_of(h.meta.name.at) < 0) __builtin_trap();
        },
        options);
  } catch (const InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  read_as(text, "fuzz.dump");
  // A leading newline and "---" keep the bytes away from the JSON side.
  read_as("---\n" + std::string(text), "fuzz.yaml");
  try {
    ReadOptions options;
    options.default_kind = "Pod";
    (void)read_watch_event(KubeText::from_string(text, "fuzz.watch"), options);
  } catch (const InputError&) {
  }
  return 0;
}

// Any text as a label selector (`gpuslice defrag --movable`): parsed or
// refused with std::invalid_argument, never a crash; what parses prints as
// text that parses back to the same requirements.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "gpuslice/defrag/label_selector.hpp"

using namespace gpuslice::defrag;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  LabelSelector s;
  try {
    s = parse_label_selector(text);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  const LabelSelector again = parse_label_selector(s.text());
  if (again.requirements.size() != s.requirements.size()) std::abort();
  for (size_t i = 0; i < s.requirements.size(); ++i) {
    const auto& a = s.requirements[i];
    const auto& b = again.requirements[i];
    if (a.key != b.key || a.op != b.op || a.values != b.values) std::abort();
  }
  (void)s.matches({{"app", "web"}, {"tier", ""}});
  return 0;
}

// How Go's encoding/json finds a struct's field in an object: the exact
// name first, then the name in any case; a JSON null leaves the field
// unset. kube-scheduler's extender types carry no json tags, so this is
// how it reads (and how we must read) ExtenderArgs, ExtenderBindingArgs
// and ExtenderPreemptionArgs.
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>

namespace gpuslice::serve::go_fields {

inline bool same_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

inline std::optional<simdjson::dom::element> member(simdjson::dom::object object, std::string_view name) {
  simdjson::dom::element found;
  bool have = object.at_key(name).get(found) == simdjson::SUCCESS;
  if (!have)
    for (auto [key, value] : object)
      if (same_ignoring_case(key, name)) {
        found = value;
        have = true;
        break;
      }
  if (!have || found.is_null()) return std::nullopt;
  return found;
}

}  // namespace gpuslice::serve::go_fields

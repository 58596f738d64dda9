// Cross-dialect what-ifs: a request written for one scheduler, said in the
// terms another reads (docs/dialects.md, "Translation"). HAMi MiB become
// Koordinator bytes, a Koordinator ratio or HAMi percentage becomes a KAI
// fraction, a KAI fraction a percentage; what the target cannot say is
// refused, naming the field.
#pragma once

#include <optional>
#include <string>

#include "gpuslice/core/dialect.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core {

struct TranslationProblem {
  std::string field;  // the resource or annotation the target cannot carry
  std::string why;
  std::string text() const { return field + ": " + why; }
};

// Rewrites `pod` so it uses only the fields `target`'s policies read (a
// request already in those terms is left as it is). Returns the first field
// it cannot carry; `pod` is then unspecified.
std::optional<TranslationProblem> translate(PodRequest& pod, Dialect target);

}  // namespace gpuslice::core

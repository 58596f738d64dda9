// Cross-dialect what-ifs: a request written for one scheduler, said in the
// terms another reads (docs/dialects.md, "Translation"). HAMi MiB become
// Koordinator bytes, a Koordinator ratio or HAMi percentage becomes a KAI
// fraction, a KAI fraction a percentage; what the target cannot say is
// refused, naming the field. Each dialect's unit says its own terms
// (DialectUnit::translate_request) with the steps below, which they share.
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

// The steps the dialects' translations are made of.
namespace translation {
// HAMi's card selectors (use-gputype, numa-bind, ...): `target` has none.
std::optional<TranslationProblem> hami_only_annotations(const PodRequest& pod, Dialect target);
// GPUs asked by more than one container, or by an init container.
std::optional<TranslationProblem> one_device_container(const PodRequest& pod, Dialect target);
// Koordinator's bytes as MiB, for a target whose `field` counts MiB.
std::optional<TranslationProblem> bytes_as_mib(ContainerRequest& c, const char* field);
// KAI's fraction as a percentage, for a target whose `field` counts percent.
std::optional<TranslationProblem> fraction_as_percent(ContainerRequest& c, const char* field);
}  // namespace translation

}  // namespace gpuslice::core

// PriorityClass objects (scheduling.k8s.io/v1) and what Kubernetes' Priority
// admission plugin (plugin/pkg/admission/priority) does with them when a pod
// is created: a pod naming a class gets its value and preemptionPolicy; a
// pod naming none gets the globalDefault class's, or priority 0 without one.
// A live cluster's dump already carries spec.priority on every pod; this is
// for dumps written by hand or filtered, which name classes only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpuslice/core/codec/kube_objects.hpp"
#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/codec/manifest.hpp"

namespace gpuslice::core::codec {

struct PriorityClassDocument {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
  bool preempt_never = false;  // preemptionPolicy: Never
  int line = 0;
};

// Throws InputError naming the field: a missing name or value, a value that
// is not a 32-bit integer, a globalDefault that is not a boolean, an unknown
// preemptionPolicy.
PriorityClassDocument priority_class_document(const PriorityClassObject& object, const ReadContext& context);

// Admission's rule on pods that do not carry spec.priority: the named class
// (the dump's, or the two built-in system classes), else the dump's
// globalDefault class, else 0; spec.preemptionPolicy likewise when unwritten.
// Throws InputError for two globalDefault classes or two classes of one name
// (the API server refuses both). A pod naming a class the dump lacks keeps 0,
// with a warning (the API server would have refused to create it).
void admit_priorities(std::span<const PriorityClassDocument> classes, std::vector<PodDocument>& pods,
                      const std::string& source, std::vector<std::string>& warnings);

}  // namespace gpuslice::core::codec

// DRA's objects read from a kubectl dump (`kubectl get nodes,pods,
// resourceslices,deviceclasses,resourceclaims,resourceclaimtemplates -A -o
// yaml|json`) through the one reader (codec/kube_reader.hpp), which keeps
// resource.k8s.io objects whole; this interprets them. Errors name the file,
// line and field (InputError).
#pragma once

#include <string>
#include <vector>

#include "gpuslice/core/codec/kube_objects.hpp"
#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/dialects/dra/objects.hpp"

namespace gpuslice::core::dra {

struct DraObjects {
  std::vector<ResourceSlice> slices;
  std::vector<DeviceClass> classes;
  std::vector<ResourceClaim> claims;
  std::vector<ResourceClaimTemplate> templates;
};

// Interprets one resource.k8s.io object into `out`. Throws InputError.
void add_resource_object(const codec::ResourceObject& object, const codec::ReadContext& context,
                         DraObjects& out);

// A pod's spec.resourceClaims with status.resourceClaimStatuses' generated
// names. Throws InputError.
std::vector<PodClaimRef> pod_claims(const codec::PodObject& pod, const codec::ReadContext& context);

// A whole dump: the DRA objects, and the nodes and pods as read.
struct DraDump {
  DraObjects objects;
  std::vector<codec::NodeObject> nodes;
  std::vector<codec::PodObject> pods;
  std::vector<std::vector<PodClaimRef>> pod_claims;  // per pod
};
DraDump read_dra_dump(const codec::KubeText& text);

}  // namespace gpuslice::core::dra

// What the dialect codecs read from a Kubernetes object, as plain data: the
// reader of manifests extracts it (labels, annotations, each container's
// resources as written), the codecs turn it into the model. Keeping the
// codecs off the YAML tree lets any reader feed them.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gpuslice::core::codec {

using TextMap = std::map<std::string, std::string, std::less<>>;

// One container's resources, quantities as written.
struct ContainerResources {
  std::string name;
  TextMap requests, limits;
  // Kubernetes defaults an extended resource's request to its limit.
  const std::string* request(std::string_view resource) const {
    if (auto it = requests.find(resource); it != requests.end()) return &it->second;
    if (auto it = limits.find(resource); it != limits.end()) return &it->second;
    return nullptr;
  }
};

struct PodFacts {
  TextMap labels, annotations;
  std::vector<ContainerResources> init_containers, containers;
};

}  // namespace gpuslice::core::codec

// HAMi's requests on a DRA cluster: what HAMi-DRA (HAMi's DRA driver,
// driver hami-core-gpu.project-hami.io) publishes per GPU and what its
// webhook makes of a container asking nvidia.com/gpu with gpumem and
// gpucores, and the claims kube-scheduler makes for plain extended-resource
// requests a DeviceClass names in extendedResourceName (KEP-5004).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuslice/core/dialects/dra/objects.hpp"
#include "gpuslice/core/model.hpp"
#include "gpuslice/core/request.hpp"

namespace gpuslice::core::dra {

inline constexpr const char* kHamiDraDriver = "hami-core-gpu.project-hami.io";
// The class HAMi-DRA's chart installs, named after the driver.
inline constexpr const char* kHamiDraClass = "hami-core-gpu.project-hami.io";

// The class HAMi-DRA's chart installs: the driver and type == 'hami-gpu'.
DeviceClass hami_dra_class();

// One GPU as HAMi-DRA publishes it: attributes type, uuid, productName,
// index; capacity memory (bytes; default the whole card, at least 1Mi in
// 1Mi steps) and cores (default 100, 0..100 in steps of 1); shared
// (allowMultipleAllocations).
Device hami_dra_device(const core::Device& card, int position);
// Its capacity alone (memory and cores with their request policies).
std::vector<Capacity> hami_dra_capacity(const core::Device& card);

// The claim HAMi-DRA's webhook writes for one container: one request "gpu"
// on its class, count = nvidia.com/gpu, capacity.requests memory =
// gpumem MiB in bytes and cores = gpucores when given. A memory percentage
// (gpumem-percentage) is asked as that share of `card_memory_mib` (claims
// hold absolute quantities; see docs/dialects.md). nullopt when the
// container asks no GPU.
std::optional<ClaimSpec> hami_dra_claim(const ContainerRequest& container, int64_t card_memory_mib);

// The claim kube-scheduler makes for a container's plain extended-resource
// request (`resource`: `count`) when a class names it in
// extendedResourceName: one request per resource on that class. nullopt
// when no class names it (a device plugin serves it).
std::optional<ClaimSpec> extended_resource_claim(const std::string& resource, int64_t count,
                                                 const std::vector<DeviceClass>& classes);

}  // namespace gpuslice::core::dra

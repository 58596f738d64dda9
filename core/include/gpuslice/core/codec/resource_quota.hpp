// ResourceQuota objects as HAMi v2.10 reads them (pkg/device/quota.go
// addQuotaLocked): of spec.hard, only limits.nvidia.com/gpumem and
// limits.nvidia.com/gpucores; every other key (cpu, pods, requests.*, other
// devices) is read and ignored, as HAMi ignores it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/quota.hpp"

namespace gpuslice::core::codec {

// A managed key's value must be a Kubernetes quantity and not negative
// (InputError naming the file, line and spec.hard field). A whole value is
// the limit (Quantity.AsInt64: "4k" is 4000); one that is not whole ("1.5")
// HAMi skips, and so does this, with a line in `warnings` when given.
NamespaceQuota namespace_quota(const ResourceQuotaObject& quota, const ReadContext& context,
                               std::vector<std::string>* warnings = nullptr);
// The same for an object without its text (an API watch event): errors name
// `source` and no line.
NamespaceQuota namespace_quota(const ResourceQuotaObject& quota, const std::string& source,
                               std::vector<std::string>* warnings = nullptr);

// Every ResourceQuota in a file or text (a dump, a List, a stream of
// documents); other kinds are skipped.
std::vector<NamespaceQuota> parse_resource_quotas(std::string_view text, const std::string& source,
                                                  std::vector<std::string>* warnings = nullptr);
std::vector<NamespaceQuota> read_resource_quota_file(const std::string& path,
                                                     std::vector<std::string>* warnings = nullptr);

}  // namespace gpuslice::core::codec

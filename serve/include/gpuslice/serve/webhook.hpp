// HAMi's mutating admission for pods (pkg/scheduler/webhook.go with the
// NVIDIA device's MutateAdmission), as a pure function: an
// admission.k8s.io/v1 AdmissionReview in, the AdmissionReview answer out,
// its changes as a base64 JSONPatch.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/quota.hpp"

namespace gpuslice::serve {

// HAMi's scheduler flags and device config that shape the mutation.
struct WebhookConfig {
  std::string scheduler_name = "hami-scheduler";  // --scheduler-name
  // --force-overwrite-default-scheduler: a pod naming "default-scheduler" is
  // taken over too (HAMi's default: true).
  bool force_overwrite_default_scheduler = true;
  std::string runtime_class_name;  // nvidia.runtimeClassName ("" leaves pods alone)
  bool overwrite_env = false;      // nvidia.overwriteEnv: NVIDIA_VISIBLE_DEVICES=none without a GPU
  std::string gpu_core_policy;     // nvidia.gpuCorePolicy ("" or "default": no env)
  core::codec::RequestDefaults defaults;
  // HAMi fitResourceQuota against its quota cache: whether the namespace's
  // limits hold what it already holds plus `request` (QuotaHeadroom::admits).
  // Unset: no quota check (the pure function has no cluster state).
  std::function<bool(const std::string& ns, const core::QuotaUse& request)> fits_quota;
};

// Not an AdmissionReview with a request (the server answers 400).
class AdmissionDecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws AdmissionDecodeError when `review` has no request.uid; a request
// whose object is not a readable Pod gets HAMi's 400 "Errored" answer.
nlohmann::json admit_pod(const nlohmann::json& review, const WebhookConfig& config);

// RFC 6902 operations turning `before` into `after` (objects key by key,
// arrays element-wise when only their tail changes).
nlohmann::json json_patch(const nlohmann::json& before, const nlohmann::json& after);

}  // namespace gpuslice::serve

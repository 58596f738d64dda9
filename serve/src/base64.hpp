// Standard base64 (RFC 4648, with padding), as Kubernetes writes []byte
// fields: kubeconfig *-data and an AdmissionReview's patch.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuslice::serve {

std::string base64_encode(std::string_view bytes);
// nullopt when `text` is not base64 (wrong alphabet, length or padding).
// Line breaks are skipped, as Go's decoder does.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace gpuslice::serve

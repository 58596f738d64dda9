// The reader's decoded objects and the API's JSON, both ways, for the seam's
// JSON side (cluster_io.hpp): tools and tests that hold whole objects.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gpuslice/core/codec/kube_objects.hpp"
#include "gpuslice/core/codec/kube_reader.hpp"

namespace gpuslice::serve {

// An object as the API's JSON: the text it was read from when that was JSON
// (the whole object), else the fields the reader keeps, with kind and apiVersion.
nlohmann::json api_json(const core::codec::KubeObject& object, const core::codec::ReadContext& context);

// A JSON object as the reader decodes it (`default_kind` when it names none);
// nullopt for kinds the reader skips. Throws core::InputError naming `source`.
std::optional<core::codec::KubeObject> decode_api_json(const nlohmann::json& object,
                                                       const std::string& default_kind,
                                                       const std::string& source);

}  // namespace gpuslice::serve

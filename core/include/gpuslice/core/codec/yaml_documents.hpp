#pragma once
// Every YAML text gpuslice reads goes through here, not YAML::LoadAll:
// yaml-cpp 0.7 (Debian's) loops forever on some malformed streams (a lone
// ',' is enough; fixed upstream in jbeder/yaml-cpp#1319 after 0.8), pushing
// a null document per turn until memory runs out. A counting pre-parse with
// a bound turns that into an InputError naming the file and line.
#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

namespace gpuslice::core::codec {

// All documents of a YAML stream; null documents are kept (callers skip them).
// Throws InputError(source, line, "", "YAML syntax error: ...").
std::vector<YAML::Node> load_yaml_documents(std::string_view text, const std::string& source);

// The first document only (scenario files, configs); same guard and errors.
YAML::Node load_yaml_document(std::string_view text, const std::string& source);

}  // namespace gpuslice::core::codec

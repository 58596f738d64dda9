// kube-scheduler's extender wire types (k8s.io/kube-scheduler/extender/v1):
// decoded from JSON whatever the field names' case (Go reads them
// case-insensitively), encoded with the capitalised names Go writes.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpuslice::serve {

// A request the extender cannot read: answered 400 with the message.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ExtenderArgs: the pod and the candidate nodes, as `NodeNames`
// (nodeCacheCapable) or as a full v1 NodeList in `Nodes`.
struct ExtenderArgs {
  nlohmann::json pod;
  std::vector<std::string> node_names;  // from either form, in the order given (repeats kept)
  bool nodes_form = false;              // true: `Nodes` was sent, answer in kind
  nlohmann::json node_items;            // the NodeList items (nodes_form only)
};

struct ExtenderFilterResult {
  // Names of the nodes that fit (`NodeNames`, or `Nodes` items when the
  // request carried full nodes); nullopt encodes as null.
  std::optional<std::vector<std::string>> nodes;
  std::map<std::string, std::string> failed;
  std::map<std::string, std::string> failed_unresolvable;
  std::string error;
};

struct ExtenderBindingArgs {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
};

// Throw ProtocolError naming the field.
ExtenderArgs decode_extender_args(std::string_view body);
ExtenderArgs decode_extender_args(const std::string& body);  // reads in place when it can
ExtenderBindingArgs decode_binding_args(std::string_view body);

// `args` gives the form to answer in (and the Node objects to echo).
std::string encode_filter_result(const ExtenderFilterResult& result, const ExtenderArgs& args);
std::string encode_binding_result(const std::string& error);

// A JSON object's member by Go's rule: the exact name first, then any case.
const nlohmann::json* field(const nlohmann::json& object, std::string_view name);

}  // namespace gpuslice::serve

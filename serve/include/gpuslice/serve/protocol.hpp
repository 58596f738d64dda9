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
  std::string pod_json;                 // the Pod as sent (decode_extender_args; empty: `pod` is read)
  std::vector<std::string> node_names;  // from either form, in the order given (repeats kept)
  bool nodes_form = false;              // true: `Nodes` was sent, answer in kind
  nlohmann::json node_items;            // the NodeList items (nodes_form only)
};

// FailedNodes: node name -> why the pod does not fit there. A pod that fits
// no node gets every named node's reason, and nodes in one state share a
// reason: names and reasons sit in one buffer, each reason once, and are
// written out without a string per node. Reads like a map of strings.
class FailedNodes {
 public:
  // failed["node"] = "reason" (a name already there gets the new reason).
  class Slot {
   public:
    Slot& operator=(std::string_view reason) {
      owner_.set(index_, owner_.add_reason(reason));
      return *this;
    }

   private:
    friend class FailedNodes;
    Slot(FailedNodes& owner, size_t index) : owner_(owner), index_(index) {}
    FailedNodes& owner_;
    size_t index_;
  };
  Slot operator[](std::string_view node);

  // Bulk use: a reason kept once (its id), then names that are not there yet.
  uint32_t add_reason(std::string_view text);
  void add(std::string_view node, uint32_t reason);
  // Room for `nodes` more names of `name_bytes` in all (a refusal names every node).
  void reserve(size_t nodes, size_t name_bytes);

  std::string at(std::string_view node) const;  // throws std::out_of_range
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  void clear();
  // Each (node, reason), in the order added.
  template <class F>
  void for_each(F visit) const {
    for (const auto& e : entries_) visit(view(e.name), view(reasons_[e.reason]));
  }
  // Each (node, reason id), in the order added; the ids' texts by reason().
  template <class F>
  void for_each_id(F visit) const {
    for (const auto& e : entries_) visit(view(e.name), e.reason);
  }
  size_t reason_count() const { return reasons_.size(); }
  std::string_view reason(uint32_t id) const { return view(reasons_[id]); }
  std::map<std::string, std::string> to_map() const;
  friend bool operator==(const FailedNodes& a, const std::map<std::string, std::string>& b) {
    return a.to_map() == b;
  }
  friend bool operator==(const FailedNodes& a, const FailedNodes& b) { return a.to_map() == b.to_map(); }

 private:
  struct Span {
    uint32_t at = 0, size = 0;
  };
  struct Entry {
    Span name;
    uint32_t reason = 0;
  };
  std::string_view view(Span s) const { return {text_.data() + s.at, s.size}; }
  Span keep(std::string_view s);
  void set(size_t index, uint32_t reason) { entries_[index].reason = reason; }
  std::string text_;
  std::vector<Span> reasons_;
  std::vector<Entry> entries_;
};

struct ExtenderFilterResult {
  // Names of the nodes that fit (`NodeNames`, or `Nodes` items when the
  // request carried full nodes); nullopt encodes as null.
  std::optional<std::vector<std::string>> nodes;
  FailedNodes failed;
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

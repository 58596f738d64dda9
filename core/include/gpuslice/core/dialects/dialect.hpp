// A dialect is one unit: everything gpuslice knows of one scheduler's GPU
// sharing (HAMi, Koordinator's DeviceShare, KAI, DRA) behind one small interface,
// one method per concern, in the manner of kube-scheduler's framework
// (interface.go): how its nodes register, how its pods ask, how its placed
// pods hold, how a binding is written, how a request is said in its terms,
// which policies it brings, and what serve can do with it.
//
// HOW TO ADD A DIALECT (docs/dialects.md, "Adding a dialect"):
//   1. a folder core/src/dialects/<name>/ holding a class derived from
//      DialectUnit (unit.cpp), its codecs and its policies; CMake takes
//      every .cpp in it (core/CMakeLists.txt globs core/src/dialects/*/);
//   2. one value in `enum class Dialect` (gpuslice/core/dialect.hpp);
//   3. one line in core/src/dialects/registry.cpp: `&<name>_dialect(),`,
//      and its declaration beside the others there;
//   4. a public header core/include/gpuslice/core/dialects/<name>.hpp only
//      if other areas (tests, sim) call its codecs or policies directly.
// Nothing else changes: readers, `place`, the simulator, serve and the
// policy registry ask the units in registry order.
//
// This interface is extended, never renamed.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuslice/core/allocation.hpp"
#include "gpuslice/core/cluster.hpp"
#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/dialect.hpp"
#include "gpuslice/core/dialects/dra/read.hpp"
#include "gpuslice/core/placed_pods.hpp"
#include "gpuslice/core/request.hpp"
#include "gpuslice/core/translate.hpp"

namespace gpuslice::core::dialects {

// The objects of a dump besides Nodes and Pods that give nodes their cards
// (Koordinator's Devices) or say what pods ask and hold (DRA's
// resource.k8s.io objects). A dialect with objects of its own adds a member
// and its branch in take() (core/src/dialects/node_objects.cpp).
struct NodeObjects {
  std::vector<codec::DeviceDocument> devices;
  dra::DraObjects dra;  // ResourceSlices, DeviceClasses, ResourceClaims and templates
  // Keeps `object` when it is one of these (readers offer every object that
  // is not a Node or Pod); false when it is not. Throws InputError.
  bool take(const codec::KubeObject& object, const codec::ReadContext& context);
};

// Every node read, with HAMi's registration already applied (`registered`,
// cards_from), for a dialect to give cards to the nodes it registers.
struct NodeRegistration {
  std::vector<codec::NodeDocument>& nodes;
  const NodeObjects& objects;
  const std::string& source;  // the file named in errors and warnings
  std::vector<std::string>& warnings;
};

// Whether no dialect has registered the node's cards yet (HAMi's
// registration is read with the Node; the others' in registry order).
inline bool unregistered(const codec::NodeDocument& n) {
  return !n.registered && n.node.cards_from == Dialect::Hami;
}

// Where a pod's request errors point (line and field) when its dialect
// cannot read it.
enum class RequestAt { Containers, Annotations };

// The whole dump read, its nodes in `cluster`: for a dialect whose pods ask
// and hold through objects printed after them (DRA's claims).
struct RequestCompletion {
  const Cluster& cluster;
  std::vector<codec::PodDocument>& docs;
  const NodeObjects& objects;
  const std::string& source;
  std::vector<std::string>& warnings;
  // A pending pod whose request cannot be read (docs[doc], the field and
  // why): the reader leaves it out, as a pod whose own fields are bad.
  const std::function<void(size_t doc, std::string field, std::string detail)>& left_out;
};

// What the pods already placed on a read make of each other: one reading
// per dialect and read_placed_pods call (KAI's pods of a node are placed
// once every GPU group of the node is known).
struct PlacedContext {
  const Cluster& cluster;
  const std::vector<codec::PodDocument>& docs;
  std::vector<PlacedPod>& out;  // out[i] is docs[out[i].doc]
  const std::string& source;
  std::vector<std::string>& warnings;
  KaiGroups* gpu_groups;  // GPU groups by node and card, for bindings (may be null)
};

class PlacedReading {
 public:
  virtual ~PlacedReading() = default;
  // Whether this dialect reads what the pod holds: by its marks, or by the
  // node it is bound to (`bound`: a node of the cluster, or none).
  virtual bool claims(const codec::PodDocument& doc, std::optional<size_t> bound) const = 0;
  // Reads out[i]'s hold (role, node, allocation), or notes it for finish().
  virtual void read(size_t i) = 0;
  // After every pod was seen.
  virtual void finish() {}
};

// What the deciding scheduler writes on the pod it placed (and beside it).
struct BindingInput {
  const Node& node;
  const PodRequest& pod;
  const PodAllocation& allocation;
  const std::map<int, std::string>& gpu_groups;  // the node's GPU groups by card (KAI)
};
struct Binding {
  std::string allocation;  // the main annotation's value (place's "allocation")
  std::vector<std::pair<std::string, std::string>> annotations, labels;
  std::vector<std::string> reservation_pods;  // Pod manifests (YAML) created beside the bind
  std::string enforcement;                    // what caps the pod at run time, in words
};

class DialectUnit {
 public:
  virtual ~DialectUnit() = default;

  virtual Dialect id() const = 0;
  virtual std::string_view name() const = 0;  // "hami", "koordinator", "kai", "dra"
  // How its nodes are recognised, in words, for messages ("KAI's GPU labels").
  virtual std::string_view registers_by() const = 0;

  // How its nodes register: cards for the nodes it recognises among those
  // no earlier dialect (registry order) registered. Throws InputError.
  virtual void register_nodes(NodeRegistration& r) const = 0;

  // How its pods ask: whether the pod names this dialect's own request
  // (its resources or annotations, by key), and that request read onto
  // `request` (HAMi's reading of the pod, which it replaces). Throws
  // CodecError, reported at request_at().
  virtual bool names_request(const codec::PodObject& pod) const = 0;
  virtual void read_request(const codec::PodFacts& facts, PodRequest& request) const = 0;
  virtual RequestAt request_at() const = 0;
  // After the whole dump is read (a request in objects printed after the
  // pods): completes docs' requests, and what a bound pod holds through
  // them (PodDocument::claim_held). Most dialects read all at read_request.
  virtual void complete_requests(RequestCompletion& /*completion*/) const {}

  // How its placed pods hold (null: it marks none).
  virtual std::unique_ptr<PlacedReading> placed_reading(PlacedContext& context) const = 0;

  // How a binding is written.
  virtual Binding write_binding(const BindingInput& input) const = 0;

  // How a request is said in its terms: rewrites `pod` (written for any
  // dialect, in the one request model) so it uses only what this dialect's
  // policies read; the first field it cannot carry.
  virtual std::optional<TranslationProblem> translate_request(PodRequest& pod) const = 0;

  // Which policies it brings (register_policy for each name).
  virtual void register_policies() const = 0;

  // Whether a card of its counts pods against a slot limit (HAMi's
  // devices' count); the others take any number of pods.
  virtual bool counts_slots() const = 0;
  // Whether HAMi's namespace quotas and shortfall text speak its terms.
  virtual bool hami_quotas() const = 0;
  // What `gpuslice serve` cannot do with it ("" when serve reads its nodes
  // and pods and writes its binding): serve refuses to start with it.
  virtual std::string serve_problem() const = 0;
};

// The units in registry order (core/src/dialects/registry.cpp).
const std::vector<const DialectUnit*>& all();
// The unit of a dialect; the one named `name` (nullptr when none is).
const DialectUnit& unit(Dialect id);
const DialectUnit* find(std::string_view name);

// Every dialect registers the nodes it recognises, in registry order; a
// node with GPUs that none registered is named in `warnings`. Throws
// InputError naming `source`, the line and the field.
void register_nodes(std::vector<codec::NodeDocument>& nodes, const NodeObjects& objects,
                    const std::string& source, std::vector<std::string>& warnings);

// Every dialect completes the requests it reads from the dump's objects, in
// registry order (DialectUnit::complete_requests).
void complete_requests(RequestCompletion& completion);

}  // namespace gpuslice::core::dialects

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
// policy registry ask the units in registry order. A dialect with object
// kinds of its own declares them (object_kinds) and keeps them in its box
// (make_objects, NodeObjects::of); one whose bound pods hold through them
// sets PodDocument::unit_held in complete_requests (PlacedRole::UnitHeld).
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
#include "gpuslice/core/dialects/object_kinds.hpp"
#include "gpuslice/core/placed_pods.hpp"
#include "gpuslice/core/request.hpp"
#include "gpuslice/core/translate.hpp"

namespace gpuslice::core::dialects {

// What a unit keeps of a dump's objects of the kinds it declares
// (DialectUnit::object_kinds), filled in the reading's one pass; its
// register_nodes and complete_requests read it back (NodeObjects::of).
class UnitObjects {
 public:
  virtual ~UnitObjects() = default;
  // Throws InputError naming the object's line and field.
  virtual void take(const codec::ResourceObject& object, const codec::ReadContext& context) = 0;
};

// The objects of a dump besides Nodes and Pods that give nodes their cards
// (Koordinator's Devices) or say what pods ask and hold (each unit's own
// kinds, in its box: DRA's resource.k8s.io objects).
struct NodeObjects {
  // A reading of nodes alone (place's parse_nodes) reads no pod's holding
  // through a unit's objects (complete_requests), so it keeps none of the
  // objects of a unit whose pods hold that way (holds_through_objects):
  // their cards would all count as free.
  enum class Reading { WithPods, NodesOnly };
  NodeObjects() : NodeObjects(Reading::WithPods) {}
  explicit NodeObjects(Reading reading);

  std::vector<codec::DeviceDocument> devices;  // Koordinator's (the reader decodes the kind itself)

  // Keeps `object` when it is one of these (readers offer every object that
  // is not a Node or Pod); false when it is not, or is a unit's kind this
  // reading leaves out. Throws InputError.
  bool take(const codec::KubeObject& object, const codec::ReadContext& context);

  // The box of the unit `id` (its own UnitObjects type, T); null when it
  // keeps no objects or this reading leaves them out.
  template <class T>
  const T* of(Dialect id) const {
    return static_cast<const T*>(box(id));
  }

 private:
  const UnitObjects* box(Dialect id) const;
  std::vector<std::unique_ptr<UnitObjects>> boxes_;  // by registry position; null: none kept
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
  // them (PodDocument::unit_held). Most dialects read all at read_request.
  virtual void complete_requests(RequestCompletion& /*completion*/) const {}

  // Which object kinds of its own it reads (the reader keeps them whole,
  // codec::ResourceObject), and the box NodeObjects keeps them in (null:
  // it declares none). DRA's: resource.k8s.io ResourceSlices, DeviceClasses,
  // ResourceClaims and templates.
  virtual std::vector<ObjectKind> object_kinds() const { return {}; }
  virtual std::unique_ptr<UnitObjects> make_objects() const { return nullptr; }
  // Whether its bound pods hold through those objects (complete_requests
  // sets PodDocument::unit_held): a reading without pods then keeps none.
  virtual bool holds_through_objects() const { return false; }

  // How its placed pods hold (null: it marks none).
  virtual std::unique_ptr<PlacedReading> placed_reading(PlacedContext& context) const = 0;

  // How a binding is written. A run records it beside the allocation
  // (pods.csv's claim_allocation) when its policy places another
  // dialect's requests (binding_recorded_by).
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
  // What its policies are, in messages ("kai's policy").
  virtual std::string policies_are() const { return std::string(name()) + "'s policy"; }
};

// The units in registry order (core/src/dialects/registry.cpp).
const std::vector<const DialectUnit*>& all();
// The unit of a dialect; the one named `name` (nullptr when none is).
const DialectUnit& unit(Dialect id);
const DialectUnit* find(std::string_view name);

// The unit that brought policy `name` (its register_policies), or nullptr:
// the study's policies, which read HAMi's requests, belong to none.
const DialectUnit* policy_unit(std::string_view name);
// The unit whose binding a run under policy `name` records beside the
// allocation (pods.csv's claim_allocation): the policy's own unit when the
// policy places another dialect's requests (DRA's `dra` places HAMi's, its
// dialect() is HAMi's); nullptr for every other policy and unknown names.
const DialectUnit* binding_recorded_by(std::string_view name);

// A reading for units whose complete_requests gave bound pods a holding
// (PodDocument::unit_held): those pods hold it, PlacedRole::UnitHeld.
std::unique_ptr<PlacedReading> unit_held_reading(PlacedContext& context);

// Every dialect registers the nodes it recognises, in registry order; a
// node with GPUs that none registered is named in `warnings`. Throws
// InputError naming `source`, the line and the field.
void register_nodes(std::vector<codec::NodeDocument>& nodes, const NodeObjects& objects,
                    const std::string& source, std::vector<std::string>& warnings);

// Every dialect completes the requests it reads from the dump's objects, in
// registry order (DialectUnit::complete_requests).
void complete_requests(RequestCompletion& completion);

}  // namespace gpuslice::core::dialects

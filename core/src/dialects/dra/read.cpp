// The interpreter of resource.k8s.io/v1 objects (read.hpp): field names and
// shapes as k8s.io/api/resource/v1 types.go declares them.
#include "gpuslice/core/dialects/dra/read.hpp"

#include <fmt/format.h>

#include <charconv>

#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::dra {
namespace {

using codec::Scalar;
using codec::TreeValue;

// A field's path ("spec.devices[3].capacity.memory.value"), spelled only
// when an error names it. The interpreter visits some forty fields a device;
// building each one's path eagerly was most of its time on a large dump.
// A Path points at its parent and at text it does not own (literals, the
// tree's keys): it lives on the stack of the walk that made it.
class Path {
 public:
  Path(const char* root) : head_(root) {}         // NOLINT: a literal is a root path
  Path(const std::string& root) : head_(root) {}  // NOLINT: so is an outer path

  // parent + head + tail, e.g. child(".attributes.", name).
  Path child(std::string_view head, std::string_view tail = {}) const {
    return Path(this, head, tail, kNone);
  }
  // parent + head + "[index]", e.g. at(".validValues", 2).
  Path at(std::string_view head, size_t index) const { return Path(this, head, {}, index); }
  // A root path with an index: "spec.devices[3]".
  static Path indexed(const char* root, size_t index) { return Path(nullptr, root, {}, index); }

  std::string str() const {
    std::string out = parent_ ? parent_->str() : std::string();
    out.append(head_).append(tail_);
    if (index_ != kNone) out += fmt::format("[{}]", index_);
    return out;
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  Path(const Path* parent, std::string_view head, std::string_view tail, size_t index)
      : parent_(parent), head_(head), tail_(tail), index_(index) {}

  const Path* parent_ = nullptr;
  std::string_view head_, tail_;
  size_t index_ = kNone;
};

class Interpreter {
 public:
  explicit Interpreter(const codec::ReadContext& context) : ctx_(context) {}

  [[noreturn]] void fail(const TreeValue& v, const Path& field, const std::string& what) const {
    ctx_.fail(v.at, field.str(), what);
  }

  bool present(const TreeValue* v) const { return v && v->leaf.given(); }

  const TreeValue* mapping(const TreeValue& parent, std::string_view key, const Path& field) const {
    const TreeValue* v = parent.field(key);
    if (!present(v)) return nullptr;
    if (!v->is_mapping()) fail(*v, field, "must be a mapping");
    return v;
  }
  const TreeValue* list(const TreeValue& parent, std::string_view key, const Path& field) const {
    const TreeValue* v = parent.field(key);
    if (!present(v)) return nullptr;
    if (!v->is_list()) fail(*v, field, "must be a list");
    return v;
  }
  const std::string& text_ref(const TreeValue& v, const Path& field) const {
    if (!v.leaf.is_text()) fail(v, field, "must be a string");
    return v.leaf.text;
  }
  std::string text(const TreeValue& v, const Path& field) const { return text_ref(v, field); }
  std::string text(const TreeValue& parent, std::string_view key, const Path& field,
                   bool required = false) const {
    const TreeValue* v = parent.field(key);
    if (!present(v)) {
      if (required) fail(parent, field, "is required");
      return {};
    }
    return text(*v, field);
  }
  int64_t integer(const TreeValue& v, const Path& field) const {
    const std::string& t = text_ref(v, field);
    int64_t out = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    if (ec != std::errc() || end != t.data() + t.size())
      fail(v, field, fmt::format("'{}' is not an integer", t));
    return out;
  }
  bool boolean(const TreeValue& v, const Path& field) const {
    const std::string& t = text_ref(v, field);
    if (t == "true") return true;
    if (t == "false") return false;
    fail(v, field, fmt::format("'{}' is not a boolean", t));
  }
  int64_t quantity(const TreeValue& v, const Path& field) const {
    const std::string& t = text_ref(v, field);
    try {
      return codec::parse_quantity_milli(t);
    } catch (const std::exception& e) {
      fail(v, field, fmt::format("'{}' is not a quantity: {}", t, e.what()));
    }
  }

  NodeSelector node_selector(const TreeValue& v, const Path& field) const {
    NodeSelector out;
    const TreeValue* terms = list(v, "nodeSelectorTerms", field.child(".nodeSelectorTerms"));
    if (!terms) return out;
    for (size_t i = 0; i < terms->items.size(); ++i) {
      const TreeValue& term = terms->items[i];
      const Path where = field.at(".nodeSelectorTerms", i);
      if (!term.is_mapping()) fail(term, where, "must be a mapping");
      auto& requirements = out.terms.emplace_back();
      for (const char* key : {"matchExpressions", "matchFields"}) {
        const TreeValue* exprs = list(term, key, where.child(".", key));
        if (!exprs) continue;
        for (size_t j = 0; j < exprs->items.size(); ++j) {
          const TreeValue& e = exprs->items[j];
          const Path key_path = where.child(".", key);
          const Path at = key_path.at("", j);
          if (!e.is_mapping()) fail(e, at, "must be a mapping");
          NodeSelectorRequirement r;
          r.key = text(e, "key", at.child(".key"), true);
          r.op = text(e, "operator", at.child(".operator"), true);
          r.field = std::string_view(key) == "matchFields";
          if (const TreeValue* values = list(e, "values", at.child(".values")))
            for (size_t k = 0; k < values->items.size(); ++k)
              r.values.push_back(text(values->items[k], at.at(".values", k)));
          requirements.push_back(std::move(r));
        }
      }
    }
    return out;
  }

  std::vector<Counter> counters(const TreeValue& v, const Path& field) const {
    std::vector<Counter> out;
    if (!v.is_mapping()) fail(v, field, "must be a mapping");
    for (const auto& [name, counter] : v.fields) {
      const Path where = field.child(".", name);
      if (!counter.is_mapping()) fail(counter, where, "must be a mapping");
      const TreeValue* value = counter.field("value");
      if (!present(value)) fail(counter, where.child(".value"), "is required");
      out.push_back(Counter{name, quantity(*value, where.child(".value"))});
    }
    return out;
  }

  Device device(const TreeValue& v, const std::string& driver, const Path& field) const {
    if (!v.is_mapping()) fail(v, field, "must be a mapping");
    Device d;
    d.name = text(v, "name", field.child(".name"), true);
    if (const TreeValue* attributes = mapping(v, "attributes", field.child(".attributes"))) {
      d.attributes.reserve(attributes->fields.size());
      for (const auto& [name, typed] : attributes->fields) {
        const Path where = field.child(".attributes.", name);
        if (!typed.is_mapping() || typed.fields.size() != 1)
          fail(typed, where, "must hold exactly one of int, bool, string, version");
        const auto& [type, value] = typed.fields.front();
        AttributeValue a;
        if (type == "int") {
          a.kind = AttributeValue::Kind::Int;
          a.int_value = integer(value, where.child(".int"));
        } else if (type == "bool") {
          a.kind = AttributeValue::Kind::Bool;
          a.bool_value = boolean(value, where.child(".bool"));
        } else if (type == "string") {
          a.kind = AttributeValue::Kind::String;
          a.string_value = text(value, where.child(".string"));
        } else if (type == "version") {
          a.kind = AttributeValue::Kind::Version;
          const std::string& t = text_ref(value, where.child(".version"));
          const auto parsed = parse_semver(t);
          if (!parsed) fail(value, where.child(".version"), fmt::format("'{}' is not a semantic version", t));
          a.version = *parsed;
        } else {
          fail(typed, where, fmt::format("unknown attribute type '{}' (int, bool, string, version)", type));
        }
        d.attributes.push_back(Attribute{qualify(name, driver), std::move(a)});
      }
    }
    if (const TreeValue* capacity = mapping(v, "capacity", field.child(".capacity"))) {
      d.capacity.reserve(capacity->fields.size());
      for (const auto& [name, cap] : capacity->fields) {
        const Path where = field.child(".capacity.", name);
        if (!cap.is_mapping()) fail(cap, where, "must be a mapping");
        const TreeValue* value = cap.field("value");
        if (!present(value)) fail(cap, where.child(".value"), "is required");
        Capacity c{qualify(name, driver), quantity(*value, where.child(".value")), std::nullopt};
        const Path at = where.child(".requestPolicy");
        if (const TreeValue* policy = mapping(cap, "requestPolicy", at)) {
          RequestPolicy p;
          if (const TreeValue* def = policy->field("default"); present(def))
            p.default_milli = quantity(*def, at.child(".default"));
          if (const TreeValue* values = list(*policy, "validValues", at.child(".validValues")))
            for (size_t i = 0; i < values->items.size(); ++i)
              p.valid_values_milli.push_back(quantity(values->items[i], at.at(".validValues", i)));
          if (const TreeValue* range = mapping(*policy, "validRange", at.child(".validRange"))) {
            CapacityRange r;
            const TreeValue* min = range->field("min");
            if (!present(min)) fail(*range, at.child(".validRange.min"), "is required");
            r.min_milli = quantity(*min, at.child(".validRange.min"));
            if (const TreeValue* max = range->field("max"); present(max))
              r.max_milli = quantity(*max, at.child(".validRange.max"));
            if (const TreeValue* step = range->field("step"); present(step))
              r.step_milli = quantity(*step, at.child(".validRange.step"));
            if (r.step_milli && *r.step_milli <= 0)
              fail(*range, at.child(".validRange.step"), "must be positive");
            p.valid_range = r;
          }
          c.request_policy = std::move(p);
        }
        d.capacity.push_back(std::move(c));
      }
    }
    if (const TreeValue* multiple = v.field("allowMultipleAllocations"); present(multiple))
      d.allow_multiple_allocations = boolean(*multiple, field.child(".allowMultipleAllocations"));
    if (const TreeValue* consumes = list(v, "consumesCounters", field.child(".consumesCounters")))
      for (size_t i = 0; i < consumes->items.size(); ++i) {
        const TreeValue& c = consumes->items[i];
        const Path where = field.at(".consumesCounters", i);
        if (!c.is_mapping()) fail(c, where, "must be a mapping");
        CounterConsumption use;
        use.counter_set = text(c, "counterSet", where.child(".counterSet"), true);
        if (const TreeValue* cs = mapping(c, "counters", where.child(".counters")))
          use.counters = counters(*cs, where.child(".counters"));
        d.consumes_counters.push_back(std::move(use));
      }
    return d;
  }

  ResourceSlice slice(const codec::ResourceObject& o) const {
    ResourceSlice s;
    s.name = o.header.meta.name.text;
    s.line = o.header.line;
    const TreeValue& spec = o.spec;
    if (!spec.is_mapping()) fail(spec.leaf.present() ? spec : TreeValue{}, "spec", "is required");
    s.driver = text(spec, "driver", "spec.driver", true);
    const TreeValue* pool = mapping(spec, "pool", "spec.pool");
    if (!pool) fail(spec, "spec.pool", "is required");
    s.pool = text(*pool, "name", "spec.pool.name", true);
    if (const TreeValue* g = pool->field("generation"); present(g))
      s.generation = integer(*g, "spec.pool.generation");
    if (const TreeValue* c = pool->field("resourceSliceCount"); present(c))
      s.resource_slice_count = integer(*c, "spec.pool.resourceSliceCount");
    s.node_name = text(spec, "nodeName", "spec.nodeName");
    if (const TreeValue* all = spec.field("allNodes"); present(all))
      s.all_nodes = boolean(*all, "spec.allNodes");
    if (const TreeValue* selector = mapping(spec, "nodeSelector", "spec.nodeSelector"))
      s.node_selector = node_selector(*selector, "spec.nodeSelector");
    if (const TreeValue* per_device = spec.field("perDeviceNodeSelection");
        present(per_device) && boolean(*per_device, "spec.perDeviceNodeSelection"))
      fail(*per_device, "spec.perDeviceNodeSelection", "is not modelled by gpuslice");
    if (const TreeValue* devices = list(spec, "devices", "spec.devices")) {
      s.devices.reserve(devices->items.size());
      for (size_t i = 0; i < devices->items.size(); ++i)
        s.devices.push_back(device(devices->items[i], s.driver, Path::indexed("spec.devices", i)));
    }
    if (const TreeValue* sets = list(spec, "sharedCounters", "spec.sharedCounters"))
      for (size_t i = 0; i < sets->items.size(); ++i) {
        const TreeValue& set = sets->items[i];
        const Path where = Path::indexed("spec.sharedCounters", i);
        if (!set.is_mapping()) fail(set, where, "must be a mapping");
        CounterSet cs;
        cs.name = text(set, "name", where.child(".name"), true);
        if (const TreeValue* c = mapping(set, "counters", where.child(".counters")))
          cs.counters = counters(*c, where.child(".counters"));
        s.shared_counters.push_back(std::move(cs));
      }
    return s;
  }

  std::vector<std::string> selectors(const TreeValue& parent, const Path& field) const {
    std::vector<std::string> out;
    const TreeValue* list_value = list(parent, "selectors", field);
    if (!list_value) return out;
    for (size_t i = 0; i < list_value->items.size(); ++i) {
      const TreeValue& s = list_value->items[i];
      const Path where = field.at("", i);
      if (!s.is_mapping()) fail(s, where, "must be a mapping");
      const TreeValue* cel = mapping(s, "cel", where.child(".cel"));
      if (!cel) fail(s, where.child(".cel"), "is required (the only selector type)");
      out.push_back(text(*cel, "expression", where.child(".cel.expression"), true));
    }
    return out;
  }

  ExactRequest exact(const TreeValue& v, const Path& field) const {
    ExactRequest r;
    r.device_class = text(v, "deviceClassName", field.child(".deviceClassName"), true);
    r.selectors = selectors(v, field.child(".selectors"));
    const std::string mode = text(v, "allocationMode", field.child(".allocationMode"));
    if (mode == "All")
      r.mode = AllocationMode::All;
    else if (!mode.empty() && mode != "ExactCount")
      fail(*v.field("allocationMode"), field.child(".allocationMode"),
           fmt::format("'{}' is not ExactCount or All", mode));
    if (const TreeValue* count = v.field("count"); present(count))
      r.count = integer(*count, field.child(".count"));
    if (r.mode == AllocationMode::ExactCount && r.count < 1)
      fail(v, field.child(".count"), "must be at least 1");
    if (const TreeValue* admin = v.field("adminAccess"); present(admin))
      r.admin_access = boolean(*admin, field.child(".adminAccess"));
    if (const TreeValue* capacity = mapping(v, "capacity", field.child(".capacity")))
      if (const TreeValue* requests = mapping(*capacity, "requests", field.child(".capacity.requests")))
        for (const auto& [name, q] : requests->fields)
          r.capacity.emplace_back(name, quantity(q, field.child(".capacity.requests.", name)));
    return r;
  }

  ClaimSpec claim_spec(const TreeValue& spec, const Path& field) const {
    ClaimSpec c;
    if (!spec.is_mapping()) return c;
    const TreeValue* devices = mapping(spec, "devices", field.child(".devices"));
    if (!devices) return c;
    if (const TreeValue* requests = list(*devices, "requests", field.child(".devices.requests")))
      for (size_t i = 0; i < requests->items.size(); ++i) {
        const TreeValue& r = requests->items[i];
        const Path where = field.at(".devices.requests", i);
        if (!r.is_mapping()) fail(r, where, "must be a mapping");
        DeviceRequest request;
        request.name = text(r, "name", where.child(".name"), true);
        if (const TreeValue* exactly = mapping(r, "exactly", where.child(".exactly"))) {
          request.exactly = exact(*exactly, where.child(".exactly"));
        } else if (const TreeValue* first = list(r, "firstAvailable", where.child(".firstAvailable"))) {
          for (size_t j = 0; j < first->items.size(); ++j) {
            const TreeValue& sub = first->items[j];
            const Path at = where.at(".firstAvailable", j);
            if (!sub.is_mapping()) fail(sub, at, "must be a mapping");
            request.first_available.push_back(
                SubRequest{text(sub, "name", at.child(".name"), true), exact(sub, at)});
          }
        } else {
          fail(r, where, "needs exactly or firstAvailable");
        }
        c.requests.push_back(std::move(request));
      }
    if (const TreeValue* constraints = list(*devices, "constraints", field.child(".devices.constraints")))
      for (size_t i = 0; i < constraints->items.size(); ++i) {
        const TreeValue& k = constraints->items[i];
        const Path where = field.at(".devices.constraints", i);
        if (!k.is_mapping()) fail(k, where, "must be a mapping");
        DeviceConstraint constraint;
        if (const TreeValue* names = list(k, "requests", where.child(".requests")))
          for (size_t j = 0; j < names->items.size(); ++j)
            constraint.requests.push_back(text(names->items[j], where.at(".requests", j)));
        constraint.match_attribute = text(k, "matchAttribute", where.child(".matchAttribute"));
        constraint.distinct_attribute = text(k, "distinctAttribute", where.child(".distinctAttribute"));
        c.constraints.push_back(std::move(constraint));
      }
    return c;
  }

  std::optional<Allocation> allocation(const TreeValue& status) const {
    if (!status.is_mapping()) return std::nullopt;
    const TreeValue* alloc = mapping(status, "allocation", "status.allocation");
    if (!alloc) return std::nullopt;
    Allocation a;
    if (const TreeValue* devices = mapping(*alloc, "devices", "status.allocation.devices"))
      if (const TreeValue* results = list(*devices, "results", "status.allocation.devices.results"))
        for (size_t i = 0; i < results->items.size(); ++i) {
          const TreeValue& r = results->items[i];
          const Path where = Path::indexed("status.allocation.devices.results", i);
          if (!r.is_mapping()) fail(r, where, "must be a mapping");
          DeviceResult d;
          d.request = text(r, "request", where.child(".request"), true);
          d.driver = text(r, "driver", where.child(".driver"), true);
          d.pool = text(r, "pool", where.child(".pool"), true);
          d.device = text(r, "device", where.child(".device"), true);
          d.shared = present(r.field("shareID"));
          if (const TreeValue* admin = r.field("adminAccess"); present(admin))
            d.admin_access = boolean(*admin, where.child(".adminAccess"));
          if (const TreeValue* consumed = mapping(r, "consumedCapacity", where.child(".consumedCapacity")))
            for (const auto& [name, q] : consumed->fields)
              d.consumed_capacity.emplace_back(name, quantity(q, where.child(".consumedCapacity.", name)));
          a.results.push_back(std::move(d));
        }
    if (const TreeValue* selector = mapping(*alloc, "nodeSelector", "status.allocation.nodeSelector")) {
      const NodeSelector s = node_selector(*selector, "status.allocation.nodeSelector");
      // The node-local form the allocator writes: metadata.name In [node].
      if (s.terms.size() == 1 && s.terms[0].size() == 1 && s.terms[0][0].field &&
          s.terms[0][0].values.size() == 1)
        a.node_name = s.terms[0][0].values[0];
    }
    return a;
  }

 private:
  const codec::ReadContext& ctx_;
};

}  // namespace

void add_resource_object(const codec::ResourceObject& o, const codec::ReadContext& context, DraObjects& out) {
  const Interpreter in(context);
  const std::string& kind = o.header.kind;
  if (kind == "ResourceSlice") {
    out.slices.push_back(in.slice(o));
  } else if (kind == "DeviceClass") {
    DeviceClass c;
    c.name = o.header.meta.name.text;
    if (o.spec.is_mapping()) {
      c.selectors = in.selectors(o.spec, "spec.selectors");
      c.extended_resource_name = in.text(o.spec, "extendedResourceName", "spec.extendedResourceName");
    }
    out.classes.push_back(std::move(c));
  } else if (kind == "ResourceClaim") {
    ResourceClaim c;
    c.namespace_name = o.header.meta.namespace_name.text;
    c.name = o.header.meta.name.text;
    c.line = o.header.line;
    c.spec = in.claim_spec(o.spec, "spec");
    c.allocation = in.allocation(o.status);
    out.claims.push_back(std::move(c));
  } else if (kind == "ResourceClaimTemplate") {
    ResourceClaimTemplate t;
    t.namespace_name = o.header.meta.namespace_name.text;
    t.name = o.header.meta.name.text;
    t.line = o.header.line;
    if (const TreeValue* inner = o.spec.is_mapping() ? o.spec.field("spec") : nullptr)
      t.spec = in.claim_spec(*inner, "spec.spec");
    out.templates.push_back(std::move(t));
  }
}

std::vector<PodClaimRef> pod_claims(const codec::PodObject& pod, const codec::ReadContext& context) {
  const Interpreter in(context);
  std::vector<PodClaimRef> out;
  const TreeValue& claims = pod.resource_claims;
  if (!claims.leaf.given()) return out;
  if (!claims.is_list()) in.fail(claims, "spec.resourceClaims", "must be a list");
  for (size_t i = 0; i < claims.items.size(); ++i) {
    const TreeValue& c = claims.items[i];
    const Path where = Path::indexed("spec.resourceClaims", i);
    if (!c.is_mapping()) in.fail(c, where, "must be a mapping");
    PodClaimRef ref;
    ref.name = in.text(c, "name", where.child(".name"), true);
    ref.claim_name = in.text(c, "resourceClaimName", where.child(".resourceClaimName"));
    ref.template_name = in.text(c, "resourceClaimTemplateName", where.child(".resourceClaimTemplateName"));
    if (ref.claim_name.empty() == ref.template_name.empty())
      in.fail(c, where, "needs exactly one of resourceClaimName and resourceClaimTemplateName");
    out.push_back(std::move(ref));
  }
  const TreeValue& statuses = pod.resource_claim_statuses;
  if (statuses.is_list())
    for (size_t i = 0; i < statuses.items.size(); ++i) {
      const TreeValue& s = statuses.items[i];
      if (!s.is_mapping()) continue;
      const std::string name =
          in.text(s, "name", Path::indexed("status.resourceClaimStatuses", i).child(".name"));
      for (auto& ref : out)
        if (ref.name == name)
          ref.generated =
              in.text(s, "resourceClaimName",
                      Path::indexed("status.resourceClaimStatuses", i).child(".resourceClaimName"));
    }
  return out;
}

DraDump read_dra_dump(const codec::KubeText& text) {
  DraDump dump;
  codec::read_kube_objects(text, [&](codec::KubeObject&& object, const codec::ReadContext& context) {
    if (auto* r = std::get_if<codec::ResourceObject>(&object)) {
      add_resource_object(*r, context, dump.objects);
    } else if (auto* pod = std::get_if<codec::PodObject>(&object)) {
      dump.pod_claims.push_back(pod_claims(*pod, context));
      dump.pods.push_back(std::move(*pod));
    } else if (auto* node = std::get_if<codec::NodeObject>(&object)) {
      dump.nodes.push_back(std::move(*node));
    }
  });
  return dump;
}

}  // namespace gpuslice::core::dra

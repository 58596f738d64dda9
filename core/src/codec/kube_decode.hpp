// The one decoder of Kubernetes objects, shared by the reader's JSON and YAML
// sides (kube_json.cpp, kube_yaml.cpp). It walks each object once, in the
// order written, keeping the fields kube_objects.hpp lists; every value it
// leaves alone is still checked by the side that reads it. Structural
// mistakes on the paths it walks are refused here with the words HAMi's
// manifest codec always used; what a leaf means is the interpreter's call.
//
// A value cursor V gives:
//   Shape shape();       what the value is (it is not consumed)
//   Position at();       where it starts
//   Scalar scalar();     the value as a leaf (a mapping or list: its kind, content checked)
//   void fields(F f);    a mapping: f(std::string_view key, Position key_at, V& value) for each
//                        key in order; values f does not consume are checked and skipped
//   void items(F f);     a list: f(size_t index, V& item)
//   void skip();         checked and skipped
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <string>
#include <string_view>

#include "gpuslice/core/codec/kube_objects.hpp"
#include "gpuslice/core/codec/kube_reader.hpp"

namespace gpuslice::core::codec::detail {

enum class Shape : uint8_t { Null, Text, Mapping, Sequence };

inline Scalar::Kind kind_of(Shape s) {
  switch (s) {
    case Shape::Null:
      return Scalar::Kind::Null;
    case Shape::Text:
      return Scalar::Kind::Text;
    case Shape::Mapping:
      return Scalar::Kind::Mapping;
    case Shape::Sequence:
      return Scalar::Kind::Sequence;
  }
  return Scalar::Kind::Null;
}

// The kinds the reader decodes, told by kind and API group.
enum class DecodedKind {
  Pod,
  Node,
  Device,
  PodDisruptionBudget,
  ResourceQuota,
  PriorityClass,
  Resource,
  Other
};

inline DecodedKind decoded_kind(std::string_view kind, std::string_view api_version) {
  const std::string_view group = api_version.substr(0, api_version.find('/'));
  const bool core_group = api_version.find('/') == std::string_view::npos;  // "v1" (or none given)
  if (kind == "Pod" && core_group) return DecodedKind::Pod;
  if (kind == "Node" && core_group) return DecodedKind::Node;
  if (kind == "ResourceQuota" && core_group) return DecodedKind::ResourceQuota;
  if (kind == "Device" && group == "scheduling.koordinator.sh") return DecodedKind::Device;
  if (kind == "PriorityClass" && (group == "scheduling.k8s.io" || api_version.empty()))
    return DecodedKind::PriorityClass;
  if (group == "resource.k8s.io" && (kind == "ResourceSlice" || kind == "DeviceClass" ||
                                     kind == "ResourceClaim" || kind == "ResourceClaimTemplate"))
    return DecodedKind::Resource;
  if (kind == "PodDisruptionBudget" && (group == "policy" || api_version.empty()))
    return DecodedKind::PodDisruptionBudget;
  return DecodedKind::Other;
}

template <class V>
class ObjectDecoder {
 public:
  explicit ObjectDecoder(const ReadContext& context) : ctx_(context) {}

  // `object` is a mapping whose kind and apiVersion were read first.
  KubeObject decode(V& object, DecodedKind kind, ObjectHeader header) {
    switch (kind) {
      case DecodedKind::Pod:
        return pod(object, std::move(header));
      case DecodedKind::Node:
        return node(object, std::move(header));
      case DecodedKind::Device:
        return device(object, std::move(header));
      case DecodedKind::ResourceQuota:
        return resource_quota(object, std::move(header));
      case DecodedKind::PriorityClass:
        return priority_class(object, std::move(header));
      case DecodedKind::Resource:
        return resource(object, std::move(header));
      default:
        return disruption_budget(object, std::move(header));
    }
  }

 private:
  // A mapping (true), or a null (false); anything else is refused, as HAMi's codec refused it.
  bool mapping(V& v, const std::string& field) {
    const Shape s = v.shape();
    if (s == Shape::Mapping) return true;
    if (s == Shape::Null) {
      v.skip();
      return false;
    }
    ctx_.fail(v.at(), field, "must be a mapping");
  }

  // A list (true) or a null (false).
  bool list(V& v, const std::string& field) {
    const Shape s = v.shape();
    if (s == Shape::Sequence) return true;
    if (s == Shape::Null) {
      v.skip();
      return false;
    }
    ctx_.fail(v.at(), field, "must be a list");
  }

  void string_map(V& v, StringMap& out, const std::string& field) {
    out.at = v.at();
    if (!mapping(v, field)) {
      out.kind = Scalar::Kind::Null;
      return;
    }
    out.kind = Scalar::Kind::Mapping;
    v.fields([&](std::string_view key, Position key_at, V& value) {
      out.entries.push_back({std::string(key), key_at, value.scalar()});
    });
  }

  void meta(V& v, ObjectMeta& m) {
    m.at = v.at();
    if (!mapping(v, "metadata")) {
      m.kind = Scalar::Kind::Null;
      return;
    }
    m.kind = Scalar::Kind::Mapping;
    v.fields([&](std::string_view key, Position, V& value) {
      if (key == "name")
        m.name = value.scalar();
      else if (key == "namespace")
        m.namespace_name = value.scalar();
      else if (key == "uid")
        m.uid = value.scalar();
      else if (key == "creationTimestamp")
        m.creation_timestamp = value.scalar();
      else if (key == "resourceVersion")
        m.resource_version = value.scalar();
      else if (key == "deletionTimestamp")
        m.deletion_timestamp = value.scalar();
      else if (key == "labels")
        string_map(value, m.labels, "metadata.labels");
      else if (key == "annotations")
        string_map(value, m.annotations, "metadata.annotations");
      else if (key == "ownerReferences")
        owners(value, m.owner_references);
    });
  }

  void owners(V& v, std::vector<OwnerReference>& out) {
    if (!list(v, "metadata.ownerReferences")) return;
    v.items([&](size_t i, V& item) {
      OwnerReference& o = out.emplace_back();
      o.at = item.at();
      if (!mapping(item, fmt::format("metadata.ownerReferences[{}]", i))) return;
      item.fields([&](std::string_view key, Position, V& value) {
        if (key == "apiVersion")
          o.api_version = text(value, i, "apiVersion");
        else if (key == "kind")
          o.kind = text(value, i, "kind");
        else if (key == "name")
          o.name = text(value, i, "name");
        else if (key == "uid")
          o.uid = text(value, i, "uid");
        else if (key == "controller")
          o.controller = flag(value, fmt::format("metadata.ownerReferences[{}].controller", i));
      });
    });
  }

  // A string an owner reference must have as a string.
  std::string text(V& v, size_t i, const char* key) {
    Scalar s = v.scalar();
    if (s.kind == Scalar::Kind::Null) return {};
    if (!s.is_text())
      ctx_.fail(s.at, fmt::format("metadata.ownerReferences[{}].{}", i, key), "must be a string");
    return std::move(s.text);
  }

  bool flag(V& v, const std::string& field) {
    const Scalar s = v.scalar();
    if (s.kind == Scalar::Kind::Null) return false;
    if (s.is_text() && !s.quoted && (s.text == "true" || s.text == "false")) return s.text == "true";
    ctx_.fail(s.at, field, "must be true or false");
  }

  void containers(V& v, std::vector<ContainerObject>& out, const char* key) {
    if (!list(v, fmt::format("spec.{}", key))) return;
    v.items([&](size_t i, V& item) {
      ContainerObject& c = out.emplace_back();
      c.at = item.at();
      // A container that is not a mapping was refused under this name (with its dot).
      if (item.shape() != Shape::Mapping)
        ctx_.fail(item.at(), fmt::format("spec.{}[{}].", key, i), "a container must be a mapping");
      item.fields([&](std::string_view k, Position, V& value) {
        if (k == "name") {
          c.name = value.scalar();
        } else if (k == "resources") {
          const std::string where = fmt::format("spec.{}[{}].resources", key, i);
          if (!mapping(value, where)) {
            c.resources_kind = Scalar::Kind::Null;
            return;
          }
          c.resources_kind = Scalar::Kind::Mapping;
          value.fields([&](std::string_view r, Position, V& list_value) {
            if (r == "limits")
              string_map(list_value, c.limits, where + ".limits");
            else if (r == "requests")
              string_map(list_value, c.requests, where + ".requests");
          });
        }
      });
    });
  }

  // status, for the keys `take` wants.
  template <class F>
  void status(V& v, F take) {
    if (!mapping(v, "status")) return;
    v.fields([&](std::string_view key, Position, V& value) { take(key, value); });
  }

  void conditions(V& v, std::vector<PodObject::Condition>& out) {
    if (!list(v, "status.conditions")) return;
    v.items([&](size_t i, V& item) {
      PodObject::Condition& c = out.emplace_back();
      c.at = item.at();
      if (item.shape() != Shape::Mapping)
        ctx_.fail(item.at(), fmt::format("status.conditions[{}]", i), "must be a mapping");
      item.fields([&](std::string_view k, Position, V& value) {
        if (k == "type")
          c.type = value.scalar();
        else if (k == "status")
          c.status = value.scalar();
      });
    });
  }

  // A value kept whole (TreeValue), for DRA's interpreter.
  void tree(V& v, TreeValue& out) {
    out.at = v.at();
    const Shape s = v.shape();
    if (s == Shape::Mapping) {
      out.leaf.kind = Scalar::Kind::Mapping;
      out.leaf.at = out.at;
      // Room for four fields at once: most mappings in resource.k8s.io
      // objects have one to four, and growing each vector field by field was
      // about 3% of a DRA dump's whole run. The slack is brief: a resource
      // object's tree is dropped once interpreted.
      out.fields.reserve(4);
      v.fields([&](std::string_view key, Position, V& value) {
        auto& field = out.fields.emplace_back();
        field.key.assign(key);
        tree(value, field.value);
      });
    } else if (s == Shape::Sequence) {
      out.leaf.kind = Scalar::Kind::Sequence;
      out.leaf.at = out.at;
      v.items([&](size_t, V& item) { tree(item, out.items.emplace_back()); });
    } else {
      out.leaf = v.scalar();
    }
  }

  ResourceObject resource(V& object, ObjectHeader header) {
    ResourceObject r;
    r.header = std::move(header);
    object.fields([&](std::string_view key, Position, V& value) {
      if (key == "metadata")
        meta(value, r.header.meta);
      else if (key == "spec")
        tree(value, r.spec);
      else if (key == "status")
        tree(value, r.status);
    });
    return r;
  }

  PodObject pod(V& object, ObjectHeader header) {
    PodObject p;
    p.header = std::move(header);
    object.fields([&](std::string_view key, Position, V& value) {
      if (key == "metadata") {
        meta(value, p.header.meta);
      } else if (key == "spec") {
        p.spec_at = value.at();
        if (!mapping(value, "spec")) {
          p.spec_kind = Scalar::Kind::Null;
          return;
        }
        p.spec_kind = Scalar::Kind::Mapping;
        value.fields([&](std::string_view k, Position, V& field) {
          if (k == "nodeName")
            p.node_name = field.scalar();
          else if (k == "schedulerName")
            p.scheduler_name = field.scalar();
          else if (k == "priority")
            p.priority = field.scalar();
          else if (k == "preemptionPolicy")
            p.preemption_policy = field.scalar();
          else if (k == "priorityClassName")
            p.priority_class_name = field.scalar();
          else if (k == "containers")
            containers(field, p.containers, "containers");
          else if (k == "initContainers")
            containers(field, p.init_containers, "initContainers");
          else if (k == "resourceClaims")
            tree(field, p.resource_claims);
        });
      } else if (key == "status") {
        status(value, [&](std::string_view k, V& field) {
          if (k == "phase")
            p.phase = field.scalar();
          else if (k == "startTime")
            p.start_time = field.scalar();
          else if (k == "nominatedNodeName")
            p.nominated_node_name = field.scalar();
          else if (k == "conditions")
            conditions(field, p.conditions);
          else if (k == "resourceClaimStatuses")
            tree(field, p.resource_claim_statuses);
        });
      }
    });
    return p;
  }

  NodeObject node(V& object, ObjectHeader header) {
    NodeObject n;
    n.header = std::move(header);
    object.fields([&](std::string_view key, Position, V& value) {
      if (key == "metadata") {
        meta(value, n.header.meta);
      } else if (key == "spec") {
        if (!mapping(value, "spec")) return;
        value.fields([&](std::string_view k, Position, V& field) {
          if (k == "unschedulable") n.unschedulable = field.scalar();
        });
      } else if (key == "status") {
        status(value, [&](std::string_view k, V& field) {
          if (k == "allocatable")
            string_map(field, n.allocatable, "status.allocatable");
          else if (k == "capacity")
            string_map(field, n.capacity, "status.capacity");
        });
      }
    });
    return n;
  }

  DeviceObject device(V& object, ObjectHeader header) {
    DeviceObject d;
    d.header = std::move(header);
    object.fields([&](std::string_view key, Position, V& value) {
      if (key == "metadata") {
        meta(value, d.header.meta);
      } else if (key == "spec") {
        if (!mapping(value, "spec")) return;
        value.fields([&](std::string_view k, Position, V& field) {
          if (k != "devices" || !list(field, "spec.devices")) return;
          field.items([&](size_t i, V& item) {
            DeviceInfo& info = d.devices.emplace_back();
            info.at = item.at();
            const std::string where = fmt::format("spec.devices[{}]", i);
            if (!mapping(item, where)) return;
            item.fields([&](std::string_view f, Position, V& v) {
              if (f == "type")
                info.type = v.scalar();
              else if (f == "id")
                info.uuid = v.scalar();
              else if (f == "minor")
                info.minor = v.scalar();
              else if (f == "health")
                info.health = v.scalar();
              else if (f == "resources")
                string_map(v, info.resources, where + ".resources");
              else if (f == "topology" && mapping(v, where + ".topology"))
                v.fields([&](std::string_view t, Position, V& tv) {
                  if (t == "socketID")
                    info.socket_id = tv.scalar();
                  else if (t == "nodeID")
                    info.numa_node_id = tv.scalar();
                  else if (t == "pcieID")
                    info.pcie_id = tv.scalar();
                  else if (t == "busID")
                    info.bus_id = tv.scalar();
                });
            });
          });
        });
      }
    });
    return d;
  }

  // An IntOrString: a plain integer, or a string ("50%").
  IntOrString int_or_string(V& v, const char* field) {
    IntOrString out;
    Scalar s = v.scalar();
    out.at = s.at;
    if (s.kind == Scalar::Kind::Null) return out;
    if (!s.is_text()) ctx_.fail(s.at, field, "must be an integer or a percentage");
    out.given = true;
    if (!s.quoted) {
      // A plain integer is an int; anything else plain (YAML's 50%) is a
      // string, as Kubernetes reads it: its meaning is the interpreter's call.
      int64_t n = 0;
      const auto [end, ec] = std::from_chars(s.text.data(), s.text.data() + s.text.size(), n);
      if (ec == std::errc() && end == s.text.data() + s.text.size()) {
        out.is_int = true;
        out.int_value = n;
      }
    }
    out.text = std::move(s.text);
    return out;
  }

  void selector(V& v, LabelSelector& out) {
    if (!mapping(v, "spec.selector")) return;
    out.given = true;
    v.fields([&](std::string_view key, Position, V& value) {
      if (key == "matchLabels") {
        string_map(value, out.match_labels, "spec.selector.matchLabels");
      } else if (key == "matchExpressions" && list(value, "spec.selector.matchExpressions")) {
        value.items([&](size_t i, V& item) {
          LabelSelectorRequirement& r = out.match_expressions.emplace_back();
          r.at = item.at();
          const std::string where = fmt::format("spec.selector.matchExpressions[{}]", i);
          if (!mapping(item, where)) return;
          item.fields([&](std::string_view f, Position, V& fv) {
            if (f == "key" || f == "operator") {
              Scalar s = fv.scalar();
              if (!s.is_text()) ctx_.fail(s.at, fmt::format("{}.{}", where, f), "must be a string");
              (f == "key" ? r.key : r.op) = std::move(s.text);
            } else if (f == "values" && list(fv, where + ".values")) {
              fv.items([&](size_t j, V& one) {
                Scalar s = one.scalar();
                if (!s.is_text()) ctx_.fail(s.at, fmt::format("{}.values[{}]", where, j), "must be a string");
                r.values.push_back(std::move(s.text));
              });
            }
          });
        });
      }
    });
  }

  PodDisruptionBudgetObject disruption_budget(V& object, ObjectHeader header) {
    PodDisruptionBudgetObject b;
    b.header = std::move(header);
    object.fields([&](std::string_view key, Position, V& value) {
      if (key == "metadata") {
        meta(value, b.header.meta);
      } else if (key == "spec") {
        if (!mapping(value, "spec")) {
          b.spec_kind = Scalar::Kind::Null;
          return;
        }
        b.spec_kind = Scalar::Kind::Mapping;
        value.fields([&](std::string_view k, Position, V& field) {
          if (k == "minAvailable")
            b.min_available = int_or_string(field, "spec.minAvailable");
          else if (k == "maxUnavailable")
            b.max_unavailable = int_or_string(field, "spec.maxUnavailable");
          else if (k == "selector")
            selector(field, b.selector);
        });
      }
    });
    return b;
  }

  ResourceQuotaObject resource_quota(V& object, ObjectHeader header) {
    ResourceQuotaObject q;
    q.header = std::move(header);
    object.fields([&](std::string_view key, Position, V& value) {
      if (key == "metadata") {
        meta(value, q.header.meta);
      } else if (key == "spec") {
        if (!mapping(value, "spec")) {
          q.spec_kind = Scalar::Kind::Null;
          return;
        }
        q.spec_kind = Scalar::Kind::Mapping;
        value.fields([&](std::string_view k, Position, V& field) {
          if (k == "hard") string_map(field, q.hard, "spec.hard");
        });
      }
    });
    return q;
  }

  // Its fields sit at the top level, beside metadata (no spec).
  PriorityClassObject priority_class(V& object, ObjectHeader header) {
    PriorityClassObject c;
    c.header = std::move(header);
    object.fields([&](std::string_view key, Position, V& value) {
      if (key == "metadata")
        meta(value, c.header.meta);
      else if (key == "value")
        c.value = value.scalar();
      else if (key == "globalDefault")
        c.global_default = value.scalar();
      else if (key == "preemptionPolicy")
        c.preemption_policy = value.scalar();
    });
    return c;
  }

  const ReadContext& ctx_;
};

}  // namespace gpuslice::core::codec::detail

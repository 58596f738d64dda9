#include "gpuslice/core/codec/resource_quota.hpp"

#include <fmt/format.h>

#include "gpuslice/core/codec/quantity.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::codec {

namespace {

// The limit a managed key sets; nothing when HAMi would skip it.
std::optional<int64_t> managed_limit(const Entry& e, const ReadContext& context,
                                     std::vector<std::string>* warnings) {
  const std::string field = "spec.hard." + e.key;
  if (!e.value.is_text()) context.fail(e.value.at, field, "must be a quantity");
  int64_t rounded = 0;
  try {
    rounded = parse_quantity_value(e.value.text);
  } catch (const std::exception& ex) {
    context.fail(e.value.at, field, ex.what());
  }
  // Rounded away from zero: any negative value is below zero here.
  if (rounded < 0) context.fail(e.value.at, field, fmt::format("'{}' is negative", e.value.text));
  try {
    return parse_quantity_integer(e.value.text);
  } catch (const std::exception&) {
    // Quantity.AsInt64 fails on a fraction: addQuotaLocked skips the key.
    if (warnings)
      warnings->push_back(fmt::format("{}:{}: {}: '{}' is not a whole number; HAMi ignores it",
                                      context.source(), context.line_of(e.value.at), field, e.value.text));
    return std::nullopt;
  }
}

}  // namespace

NamespaceQuota namespace_quota(const ResourceQuotaObject& quota, const ReadContext& context,
                               std::vector<std::string>* warnings) {
  NamespaceQuota out;
  out.line = quota.header.line;
  const ObjectMeta& meta = quota.header.meta;
  auto text_of = [&](const Scalar& s, const char* field) {
    if (!s.is_text()) context.fail(s.at, field, "must be a string");
    return s.text;
  };
  out.ns = meta.namespace_name.given() ? text_of(meta.namespace_name, "metadata.namespace") : "default";
  if (meta.name.given()) out.name = text_of(meta.name, "metadata.name");
  for (const Entry& e : quota.hard.entries) {
    if (e.key == kQuotaMemoryKey)
      out.limits.memory_mib = managed_limit(e, context, warnings);
    else if (e.key == kQuotaCoresKey)
      out.limits.cores = managed_limit(e, context, warnings);
  }
  return out;
}

namespace {
// Where an object decoded from memory came from: a name, no lines.
class NamedOnly final : public ReadContext {
 public:
  explicit NamedOnly(const std::string& source) : source_(source) {}
  const std::string& source() const override { return source_; }
  int line_of(Position) const override { return 0; }
  std::string_view raw_object() const override { return {}; }

 private:
  const std::string& source_;
};
}  // namespace

NamespaceQuota namespace_quota(const ResourceQuotaObject& quota, const std::string& source,
                               std::vector<std::string>* warnings) {
  return namespace_quota(quota, NamedOnly(source), warnings);
}

std::vector<NamespaceQuota> parse_resource_quotas(std::string_view text, const std::string& source,
                                                  std::vector<std::string>* warnings) {
  std::vector<NamespaceQuota> out;
  read_kube_objects(KubeText::from_string(text, source),
                    [&](KubeObject&& object, const ReadContext& context) {
                      if (const auto* q = std::get_if<ResourceQuotaObject>(&object))
                        out.push_back(namespace_quota(*q, context, warnings));
                    });
  return out;
}

std::vector<NamespaceQuota> read_resource_quota_file(const std::string& path,
                                                     std::vector<std::string>* warnings) {
  std::vector<NamespaceQuota> out;
  read_kube_objects(KubeText::from_file(path), [&](KubeObject&& object, const ReadContext& context) {
    if (const auto* q = std::get_if<ResourceQuotaObject>(&object))
      out.push_back(namespace_quota(*q, context, warnings));
  });
  return out;
}

}  // namespace gpuslice::core::codec

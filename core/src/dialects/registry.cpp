// The dialects, in the order readers ask them: a node registered by an
// earlier one is not offered to a later one, and a placed pod is read by
// the first that claims it. Adding a dialect adds its two lines here
// (gpuslice/core/dialects/dialect.hpp says the rest). DRA is last: its
// cards are only for nodes no other registration gave any.
#include <fmt/format.h>

#include "gpuslice/core/dialects/dialect.hpp"

namespace gpuslice::core::dialects {

const DialectUnit& hami_dialect();         // dialects/hami/unit.cpp
const DialectUnit& koordinator_dialect();  // dialects/koordinator/unit.cpp
const DialectUnit& kai_dialect();          // dialects/kai/unit.cpp
const DialectUnit& dra_dialect();          // dialects/dra/unit.cpp

const std::vector<const DialectUnit*>& all() {
  static const std::vector<const DialectUnit*> units{
      &hami_dialect(),
      &koordinator_dialect(),
      &kai_dialect(),
      &dra_dialect(),
  };
  return units;
}

const DialectUnit& unit(Dialect id) {
  for (const DialectUnit* u : all())
    if (u->id() == id) return *u;
  throw std::logic_error(
      fmt::format("dialect {} has no unit in core/src/dialects/registry.cpp", static_cast<int>(id)));
}

const DialectUnit* find(std::string_view name) {
  for (const DialectUnit* u : all())
    if (u->name() == name) return u;
  return nullptr;
}

}  // namespace gpuslice::core::dialects

namespace gpuslice::core {

std::string_view dialect_name(Dialect d) { return dialects::unit(d).name(); }

}  // namespace gpuslice::core

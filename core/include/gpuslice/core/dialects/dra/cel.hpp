// The CEL subset DRA selectors use (k8s.io/dynamic-resource-allocation/cel),
// compiled once per expression into a small tree and evaluated per device
// without allocating. The variable is `device` with `driver`,
// `allowMultipleAllocations`, `attributes[domain].id` (int, bool, string or
// semver values) and `capacity[domain].id` (quantities). Supported: literals
// (int, uint, double, string, bool, null, lists), `! - * / % + -`,
// comparisons, `&& || ?:` with CEL's error absorption, `in`, `has()`,
// `size`, `startsWith` `endsWith` `contains` `matches` (a literal pattern),
// `quantity('..')` with `compareTo` `isGreaterThan` `isLessThan`
// `asInteger`, `semver('..')` with `compareTo` `isGreaterThan`
// `isLessThan` `major` `minor` `patch`. Anything else (macros, map literals,
// conversions, other functions) is refused at compile time with a CelError
// naming the expression: a silently different answer would be worse.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "gpuslice/core/dialects/dra/device.hpp"

namespace gpuslice::core::dra {

// An expression outside the subset, or malformed: "CEL expression `...`: why".
class CelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One evaluation. A runtime error (no such key, no such overload, overflow)
// is what makes Kubernetes' allocator fail the whole allocation attempt.
struct CelOutcome {
  enum class Kind : uint8_t { False, True, Error };
  Kind kind = Kind::False;
  const char* error = "";  // Error only: a static description
  bool matches() const { return kind == Kind::True; }
};

class CelProgram {
 public:
  // Throws CelError.
  static CelProgram compile(std::string_view expression);
  CelOutcome evaluate(const DeviceView& device) const;
  const std::string& expression() const;

  CelProgram(CelProgram&&) noexcept;
  CelProgram& operator=(CelProgram&&) noexcept;
  ~CelProgram();

  struct Impl;

 private:
  explicit CelProgram(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuslice::core::dra

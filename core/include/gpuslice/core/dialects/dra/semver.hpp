// Semantic versions as DRA's `version` attributes and CEL's semver() hold
// them: blang/semver's Parse (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD], no
// leading zeros on numbers) and its ordering (build metadata ignored; a
// prerelease sorts before its release; prerelease identifiers compared one
// by one, numeric ones as numbers and below alphanumeric ones).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuslice::core::dra {

struct Semver {
  uint64_t major = 0, minor = 0, patch = 0;
  std::string prerelease;  // without the '-'; "" when none
  std::string build;       // without the '+'; not compared

  // -1, 0 or 1.
  int compare(const Semver& other) const;
  bool operator==(const Semver& other) const { return compare(other) == 0; }
  std::string text() const;
};

// The version, or nullopt when `text` is not a strict semantic version.
std::optional<Semver> parse_semver(std::string_view text);

}  // namespace gpuslice::core::dra

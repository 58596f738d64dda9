#include "gpuslice/core/dialects/dra/semver.hpp"

#include <charconv>
#include <vector>

namespace gpuslice::core::dra {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool identifier_chars(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-'))
      return false;
  return true;
}

// A version number: digits, no leading zero unless it is "0".
std::optional<uint64_t> number(std::string_view s) {
  if (!all_digits(s) || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split_dots(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    parts.push_back(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

int three_way(uint64_t a, uint64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

// One prerelease identifier against another (semver 2.0.0, rule 11).
int compare_identifier(std::string_view a, std::string_view b) {
  const bool a_num = all_digits(a), b_num = all_digits(b);
  if (a_num && b_num) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;  // no leading zeros: longer is larger
    const int c = a.compare(b);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a_num) return -1;
  if (b_num) return 1;
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

int Semver::compare(const Semver& other) const {
  if (int c = three_way(major, other.major)) return c;
  if (int c = three_way(minor, other.minor)) return c;
  if (int c = three_way(patch, other.patch)) return c;
  if (prerelease.empty() || other.prerelease.empty()) {
    if (prerelease.empty() && other.prerelease.empty()) return 0;
    return prerelease.empty() ? 1 : -1;
  }
  const auto mine = split_dots(prerelease), theirs = split_dots(other.prerelease);
  for (size_t i = 0; i < mine.size() && i < theirs.size(); ++i)
    if (int c = compare_identifier(mine[i], theirs[i])) return c;
  return three_way(mine.size(), theirs.size());
}

std::string Semver::text() const {
  std::string out = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  if (!prerelease.empty()) out += "-" + prerelease;
  if (!build.empty()) out += "+" + build;
  return out;
}

std::optional<Semver> parse_semver(std::string_view text) {
  Semver v;
  std::string_view core = text;
  if (const size_t plus = core.find('+'); plus != std::string_view::npos) {
    const std::string_view build = core.substr(plus + 1);
    for (auto part : split_dots(build))
      if (!identifier_chars(part)) return std::nullopt;
    v.build = std::string(build);
    core = core.substr(0, plus);
  }
  if (const size_t dash = core.find('-'); dash != std::string_view::npos) {
    const std::string_view pre = core.substr(dash + 1);
    for (auto part : split_dots(pre)) {
      if (!identifier_chars(part)) return std::nullopt;
      if (all_digits(part) && part.size() > 1 && part[0] == '0') return std::nullopt;
    }
    v.prerelease = std::string(pre);
    core = core.substr(0, dash);
  }
  const auto numbers = split_dots(core);
  if (numbers.size() != 3) return std::nullopt;
  const auto major = number(numbers[0]), minor = number(numbers[1]), patch = number(numbers[2]);
  if (!major || !minor || !patch) return std::nullopt;
  v.major = *major;
  v.minor = *minor;
  v.patch = *patch;
  return v;
}

}  // namespace gpuslice::core::dra

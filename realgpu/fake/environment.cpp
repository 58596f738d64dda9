#include "environment.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gpuslice::fake {

std::optional<std::string> env_value(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

EnvSnapshot EnvSnapshot::take(std::initializer_list<const char*> names) {
  EnvSnapshot snapshot;
  for (const char* name : names) snapshot.values_.emplace_back(name, env_value(name));
  return snapshot;
}

std::uint64_t env_number(const char* name, std::uint64_t fallback, std::uint64_t min, std::uint64_t max,
                         std::string& error) {
  const std::optional<std::string> text = env_value(name);
  if (!text) return fallback;
  std::uint64_t value = 0;
  const char* begin = text->data();
  const char* end = begin + text->size();
  const bool digits_only = !text->empty() && text->find_first_not_of("0123456789") == std::string::npos;
  const auto [stop, ec] = std::from_chars(begin, end, value);
  if (!digits_only || ec != std::errc() || stop != end || value < min || value > max) {
    error = std::string(name) + "=\"" + *text + "\": expected a whole number in [" + std::to_string(min) +
            ", " + std::to_string(max) + "]";
    return fallback;
  }
  return value;
}

std::int32_t nvml_pid(std::int32_t pid) {
  const char* text = std::getenv(kPidNamespaceVariable);
  if (text == nullptr || *text == '\0') return pid;
  std::int32_t offset = 0;
  const auto [stop, ec] = std::from_chars(text, text + std::strlen(text), offset);
  if (ec != std::errc() || *stop != '\0' || offset < 0 || offset > (1 << 30)) return pid;
  return pid + offset;
}

void report(std::string_view line) {
  std::fprintf(stderr, "gpuslice fake driver: %.*s\n", static_cast<int>(line.size()), line.data());
}

}  // namespace gpuslice::fake

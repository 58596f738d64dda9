// Splitting and integer fields of HAMi's annotation texts, shared by the
// registration and allocation codecs (internal to the codecs).
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <string_view>
#include <vector>

#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::codec::fields {

// Every piece between separators, empty ones included ("a,,b" -> a, "", b).
inline std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (true) {
    const size_t next = s.find(sep, pos);
    out.push_back(s.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos));
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  return out;
}

// A whole decimal number that fits T; CodecError naming the field otherwise.
// `where` is appended to the message (" in allocation").
template <typename T>
T parse_int(std::string_view text, std::string_view field, std::string_view where = "") {
  T value{};
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty())
    throw CodecError(fmt::format("invalid {} field '{}'{}: not an integer in range", field, text, where));
  return value;
}

}  // namespace gpuslice::core::codec::fields

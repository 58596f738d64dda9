// status.startTime and other RFC 3339 times as the API writes them, read
// into seconds since 1970 (what preemption compares).
#pragma once

#include <optional>
#include <string_view>

namespace gpuslice::serve {

// "2026-11-28T06:15:52Z", with fractions or a +hh:mm offset; nullopt for
// anything else (an empty text included).
std::optional<double> rfc3339_seconds(std::string_view text);

}  // namespace gpuslice::serve

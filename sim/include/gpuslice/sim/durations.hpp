// Durations and times as the simulator's inputs write them: the
// gpuslice.io/expected-duration annotation and --assume-duration ("2h30m"),
// and Kubernetes' metadata.creationTimestamp (RFC 3339).
#pragma once

#include <optional>
#include <string_view>

namespace gpuslice::sim {

// "90s", "45m", "2h30m", "1.5h", "3d", "3600" (seconds) -> seconds; nullopt
// when unreadable or not positive.
std::optional<double> parse_duration(std::string_view text);
// RFC 3339 ("2024-05-10T12:01:44Z", fractions, offsets) -> seconds since
// 1970; nullopt when unreadable.
std::optional<double> parse_timestamp(std::string_view text);

}  // namespace gpuslice::sim

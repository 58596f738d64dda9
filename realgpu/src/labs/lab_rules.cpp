#include "gpuslice/realgpu/lab_rules.hpp"

#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <string>

namespace gpuslice::realgpu {

std::optional<OomLine> find_oom_line(std::string_view text) {
  static const std::regex kLine(R"(Device (\d+) OOM (\d+) / (\d+))");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(text.begin(), text.end(), m, kLine)) return std::nullopt;
  try {
    return OomLine{std::stoi(m[1].str()), std::stoull(m[2].str()), std::stoull(m[3].str())};
  } catch (const std::exception&) {  // digits beyond 64 bits: not a line we wrote
    return std::nullopt;
  }
}

uint64_t driver_charge(uint64_t bytes) {
  constexpr uint64_t kPage = 2 * kMiB, kSmall = 512;
  const uint64_t step = bytes >= kPage ? kPage : kSmall;
  return (bytes + step - 1) / step * step;
}

AllocationExpectation expected_outcome(const AllocationTrial& t) {
  const uint64_t charge = driver_charge(t.request);
  const uint64_t room = t.limit > t.context ? t.limit - t.context : 0;
  AllocationExpectation e;
  if (!t.chunked) {
    e.refused = charge > room;
    e.granted = e.refused ? 0 : t.request;
    e.needed = t.context + charge;
    return e;
  }
  const uint64_t chunks = charge == 0 ? 0 : room / charge;
  e.refused = true;
  e.granted = chunks * t.request;
  e.needed = t.context + (chunks + 1) * charge;
  return e;
}

std::string mib_text(uint64_t bytes) {
  return bytes % kMiB == 0 ? fmt::format("{} MiB", bytes / kMiB)
                           : fmt::format("{:.1f} MiB", static_cast<double>(bytes) / kMiB);
}

Verdict judge_allocation(const AllocationTrial& t) {
  const AllocationExpectation e = expected_outcome(t);
  auto fail = [](std::string why) { return Verdict{false, std::move(why)}; };
  if (t.granted != e.granted)
    return fail(fmt::format("granted {}, an exact slice grants {} (limit {} - context {})",
                            mib_text(t.granted), mib_text(e.granted), mib_text(t.limit),
                            mib_text(t.context)));
  if (!e.refused) {
    if (t.refused) return fail("refused although it fits");
    return {true, ""};
  }
  if (!t.refused) return fail("the application saw no out-of-memory error");
  if (!t.oom) return fail("no \"Device <i> OOM <needed> / <limit>\" line from the shim");
  if (t.oom->limit != t.limit)
    return fail(fmt::format("the refusal names limit {}, the slice is {}", t.oom->limit, t.limit));
  const uint64_t gap = t.oom->needed > e.needed ? t.oom->needed - e.needed : e.needed - t.oom->needed;
  if (gap > kFootprintSlack)
    return fail(fmt::format("the refusal says {} needed, context + held + asked is {}",
                            mib_text(t.oom->needed), mib_text(e.needed)));
  return {true, ""};
}

Verdict judge_share(double mean_percent, int cap_percent, double tolerance_points) {
  if (std::isnan(mean_percent)) return {false, "no utilisation sample"};
  const double off = mean_percent - cap_percent;
  if (std::abs(off) <= tolerance_points) return {true, ""};
  return {false, fmt::format("{:.1f}% is {:+.1f} points from the {}% cap", mean_percent, off, cap_percent)};
}

}  // namespace gpuslice::realgpu

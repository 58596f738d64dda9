#include "rfc3339.hpp"

#include <charconv>
#include <cstdint>

namespace gpuslice::serve {

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// status.startTime as the API writes it (RFC 3339: "2026-11-28T06:15:52Z",
// maybe fractions or an offset) in seconds since 1970; nullopt otherwise.
}  // namespace

std::optional<double> rfc3339_seconds(std::string_view t) {
  auto number = [&](size_t at, size_t len, int& out) {
    if (at + len > t.size()) return false;
    const auto [end, ec] = std::from_chars(t.data() + at, t.data() + at + len, out);
    return ec == std::errc() && end == t.data() + at + len;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (t.size() < 20 || !number(0, 4, y) || t[4] != '-' || !number(5, 2, mo) || t[7] != '-' ||
      !number(8, 2, d) || (t[10] != 'T' && t[10] != 't' && t[10] != ' ') || !number(11, 2, h) ||
      t[13] != ':' || !number(14, 2, mi) || t[16] != ':' || !number(17, 2, s))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  double seconds =
      static_cast<double>(days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) * 86400.0 +
      h * 3600.0 + mi * 60.0 + s;
  size_t at = 19;
  if (at < t.size() && t[at] == '.') {
    double scale = 0.1;
    for (++at; at < t.size() && t[at] >= '0' && t[at] <= '9'; ++at, scale /= 10)
      seconds += (t[at] - '0') * scale;
  }
  if (at < t.size() && (t[at] == 'Z' || t[at] == 'z') && at + 1 == t.size()) return seconds;
  int oh = 0, om = 0;
  if (at + 6 == t.size() && (t[at] == '+' || t[at] == '-') && number(at + 1, 2, oh) && t[at + 3] == ':' &&
      number(at + 4, 2, om))
    return seconds - (t[at] == '+' ? 1 : -1) * (oh * 3600.0 + om * 60.0);
  return std::nullopt;
}

}  // namespace gpuslice::serve

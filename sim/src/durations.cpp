#include "gpuslice/sim/durations.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace gpuslice::sim {

namespace {

std::optional<double> number_prefix(std::string_view& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return v;
}

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

std::optional<double> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double total = 0;
  std::string_view rest = text;
  bool any = false;
  while (!rest.empty()) {
    auto v = number_prefix(rest);
    if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
    double unit = 1;
    if (rest.empty()) {
      if (any) return std::nullopt;  // "1h30": a number without its unit after a unit
    } else if (rest.starts_with("ms")) {
      unit = 0.001;
      rest.remove_prefix(2);
    } else {
      switch (rest.front()) {
        case 's':
          unit = 1;
          break;
        case 'm':
          unit = 60;
          break;
        case 'h':
          unit = 3600;
          break;
        case 'd':
          unit = 86400;
          break;
        default:
          return std::nullopt;
      }
      rest.remove_prefix(1);
    }
    total += *v * unit;
    any = true;
  }
  if (!(total > 0) || !std::isfinite(total)) return std::nullopt;
  return total;
}

std::optional<double> parse_timestamp(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  auto digits = [&](size_t at, size_t n) -> std::optional<int> {
    if (at + n > t.size()) return std::nullopt;
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return std::nullopt;
      v = v * 10 + (t[i] - '0');
    }
    return v;
  };
  const auto y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2), h = digits(11, 2), mi = digits(14, 2),
             s = digits(17, 2);
  if (!y || !mo || !d || !h || !mi || !s || t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != 't') ||
      t[13] != ':' || t[16] != ':' || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 ||
      *s > 60)
    return std::nullopt;
  double seconds =
      static_cast<double>(days_from_civil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d))) *
          86400 +
      *h * 3600 + *mi * 60 + *s;
  size_t at = 19;
  if (at < t.size() && t[at] == '.') {
    double scale = 0.1;
    ++at;
    const size_t start = at;
    while (at < t.size() && t[at] >= '0' && t[at] <= '9') {
      seconds += (t[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (at == start) return std::nullopt;
  }
  if (at < t.size() && (t[at] == 'Z' || t[at] == 'z') && at + 1 == t.size()) return seconds;
  if (at + 6 == t.size() && (t[at] == '+' || t[at] == '-') && t[at + 3] == ':') {
    const auto oh = digits(at + 1, 2), om = digits(at + 4, 2);
    if (!oh || !om) return std::nullopt;
    const double offset = *oh * 3600 + *om * 60;
    return t[at] == '+' ? seconds - offset : seconds + offset;
  }
  return std::nullopt;
}

}  // namespace gpuslice::sim

#include "gpuslice/serve/prometheus_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace gpuslice::serve {

std::string prometheus_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string prometheus_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return "0";
  // The shortest digits that read back as v; then Go's rule for 'g' with
  // the shortest precision: exponent form when the decimal exponent is
  // below -4 or at least 6, with at least two exponent digits.
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // "[-]d[.ddd]e[+-]XX"
  const bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exp = std::stoi(sci.substr(e + 1));
  const auto nd = static_cast<int>(digits.size());
  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 6) {
    out += digits.substr(0, 1);
    if (nd > 1) out += "." + digits.substr(1);
    char ex[16];
    std::snprintf(ex, sizeof ex, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return out + ex;
  }
  if (exp < 0) return out + "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  if (nd <= exp + 1) return out + digits + std::string(static_cast<size_t>(exp + 1 - nd), '0');
  return out + digits.substr(0, static_cast<size_t>(exp + 1)) + "." +
         digits.substr(static_cast<size_t>(exp + 1));
}

std::string render_prometheus(std::vector<PrometheusFamily> families) {
  std::sort(families.begin(), families.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::string out;
  for (auto& f : families) {
    if (f.samples.empty()) continue;
    for (auto& s : f.samples) std::sort(s.labels.begin(), s.labels.end());
    std::stable_sort(f.samples.begin(), f.samples.end(), [](const auto& a, const auto& b) {
      const size_t n = std::min(a.labels.size(), b.labels.size());
      for (size_t i = 0; i < n; ++i)
        if (a.labels[i].second != b.labels[i].second) return a.labels[i].second < b.labels[i].second;
      return a.labels.size() < b.labels.size();
    });
    out += "# HELP " + f.name + " " + f.help + "\n# TYPE " + f.name + " " + f.type + "\n";
    for (const auto& s : f.samples) {
      out += f.name;
      if (!s.labels.empty()) {
        out += '{';
        for (size_t i = 0; i < s.labels.size(); ++i) {
          if (i) out += ',';
          out += s.labels[i].first + "=\"" + prometheus_label_value(s.labels[i].second) + '"';
        }
        out += '}';
      }
      out += ' ' + prometheus_number(s.value) + '\n';
    }
  }
  return out;
}

}  // namespace gpuslice::serve

#include <algorithm>
#include <string>
#include <vector>

#include "gpuslice/cli/grammar.hpp"

namespace gpuslice::cli {

namespace {
// Damerau-Levenshtein (optimal string alignment): a swapped pair of letters
// (`--polciy`) is one edit, as people mistype.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}
}  // namespace

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  const size_t limit = std::clamp<size_t>(word.size() / 3, 1, 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  // A prefix of exactly one candidate (`--snap`) is a suggestion too.
  if (best.empty() && word.size() >= 3) {
    for (const auto& c : candidates)
      if (c.rfind(word, 0) == 0) {
        if (!best.empty()) return {};
        best = c;
      }
  }
  return best;
}

}  // namespace gpuslice::cli

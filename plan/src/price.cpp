#include "gpuslice/plan/price.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "gpuslice/core/errors.hpp"

namespace gpuslice::plan {

namespace {
using core::InputError;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::string word;
  for (char c : s) {
    if (c == ' ' || c == '-' || c == '_' || c == '\t') {
      if (!word.empty()) out.push_back(lower(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(lower(word));
  return out;
}

// The number of words of `key` when they appear in a row among the model's; 0 when not.
size_t model_match(const std::string& key, const std::string& model) {
  const auto k = words(key), m = words(model);
  if (k.empty() || k.size() > m.size()) return 0;
  for (size_t at = 0; at + k.size() <= m.size(); ++at)
    if (std::equal(k.begin(), k.end(), m.begin() + static_cast<long>(at))) return k.size();
  return 0;
}

// The price of a card of `model`; throws when none or two alike match.
double card_price(const std::string& model, const std::string& group, const std::vector<Price>& prices) {
  const Price* best = nullptr;
  size_t best_words = 0;
  for (const auto& p : prices) {
    const size_t n = model_match(p.key, model);
    if (n == 0) continue;
    if (n == best_words && best && best->per_hour != p.per_hour)
      throw InputError(
          "command line", 0, "--price",
          fmt::format("both '{}' and '{}' name the cards of '{}' ({}): give one, or the template's "
                      "name",
                      best->key, p.key, group, model));
    if (n > best_words) {
      best = &p;
      best_words = n;
    }
  }
  if (!best)
    throw InputError(
        "command line", 0, "--price",
        fmt::format("no price for the fleet template '{}' (cards: {}): give --price {}=COST (a node, "
                    "per hour) or --price MODEL=COST (a card)",
                    group, model.empty() ? "model not given" : model, group));
  return best->per_hour;
}
}  // namespace

Price parse_price(std::string_view text) {
  const size_t eq = text.rfind('=');
  Price p;
  if (eq == std::string_view::npos || eq == 0)
    throw InputError("command line", 0, "--price",
                     fmt::format("'{}': write MODEL=COST, e.g. A100=3.20", text));
  p.key = std::string(text.substr(0, eq));
  const std::string_view cost = text.substr(eq + 1);
  const auto [end, ec] = std::from_chars(cost.data(), cost.data() + cost.size(), p.per_hour);
  if (cost.empty() || ec != std::errc() || end != cost.data() + cost.size() || !std::isfinite(p.per_hour) ||
      p.per_hour <= 0)
    throw InputError("command line", 0, "--price",
                     fmt::format("'{}': the cost must be a positive number (per hour)", text));
  return p;
}

double node_price(const sim::FleetGroup& group, const std::vector<Price>& prices) {
  const std::string& name = group.node.name;
  for (const auto& p : prices)
    if (!name.empty() && lower(p.key) == lower(name)) return p.per_hour;
  if (group.prototype) {
    double sum = 0;
    for (const auto& d : group.prototype->devices) sum += card_price(d.type, name, prices);
    if (group.prototype->devices.empty()) return card_price(group.prototype->model, name, prices);
    return sum;
  }
  return static_cast<double>(group.node.cards) * card_price(group.node.model, name, prices);
}

std::vector<std::string> ambiguous_price_keys(const std::vector<const sim::FleetGroup*>& groups,
                                              const std::vector<Price>& prices) {
  std::vector<std::string> out;
  for (const auto& p : prices) {
    std::string template_name, model;
    for (const sim::FleetGroup* g : groups) {
      if (!g->node.name.empty() && lower(p.key) == lower(g->node.name)) template_name = g->node.name;
      std::vector<std::string> models;
      if (g->prototype) {
        for (const auto& d : g->prototype->devices) models.push_back(d.type);
        models.push_back(g->prototype->model);
      } else {
        models.push_back(g->node.model);
      }
      for (const auto& m : models)
        if (model.empty() && !m.empty() && model_match(p.key, m) > 0) model = m;
    }
    if (!template_name.empty() && !model.empty())
      out.push_back(fmt::format(
          "--price {}={}: '{}' names the fleet template '{}' and the card model '{}': took the template "
          "(a node of '{}' costs {:.2f}/h as a whole); to price each card, write --price '{}={}'",
          p.key, p.per_hour, p.key, template_name, model, template_name, p.per_hour, model, p.per_hour));
  }
  return out;
}

}  // namespace gpuslice::plan

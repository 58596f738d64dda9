#include "compare_cells.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "gpuslice/sim/headline.hpp"
#include "gpuslice/sim/html_page.hpp"
#include "queue_outcome.hpp"
#include "report_data.hpp"

namespace gpuslice::sim {

namespace {
using Json = nlohmann::ordered_json;

std::string text(const Json& s, const char* key) {
  if (!s.is_object() || !s.contains(key)) return "-";
  const Json& v = s[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return "-";
}

// A card's UUID cut to its first group ("GPU-591a4d2f"): enough to tell a
// node's cards apart in a terminal line; compare.html shows them whole. A
// DRA device ("driver/pool/device") is cut to its device name: the node is
// beside it.
std::string short_card(const std::string& uuid) {
  if (const size_t slash = uuid.rfind('/'); slash != std::string::npos) return uuid.substr(slash + 1);
  const size_t dash = uuid.find('-', uuid.find('-') + 1);
  return dash == std::string::npos ? uuid : uuid.substr(0, dash);
}

QueueCell queue_cell(const PodRecord* pod, double end) {
  QueueCell c;
  if (!pod) {
    c.terminal = "-";
    c.html = "<span class=\"na\">not in this run</span>";
    return c;
  }
  const QueueOutcome o = queue_outcome(*pod, end);
  c.placed = o.kind == QueueOutcome::Kind::AtOnce || o.kind == QueueOutcome::Kind::AfterWaiting;
  if (c.placed) {
    std::string cards;
    if (o.cards.size() > 2)
      cards = fmt::format(" {} cards", o.cards.size());
    else
      for (size_t i = 0; i < o.cards.size(); ++i) cards += (i ? "+" : " ") + short_card(o.cards[i].uuid);
    c.terminal = o.node + cards +
                 (o.kind == QueueOutcome::Kind::AfterWaiting ? " after " + human_duration(o.waited) : "");
    c.html = fmt::format(
        "<div><strong>{}</strong> {}</div>{}", html::escape(o.node),
        html::escape(o.kind == QueueOutcome::Kind::AtOnce ? "at once" : "after " + human_duration(o.waited)),
        cards_html(o));
  } else {
    c.terminal = (o.kind == QueueOutcome::Kind::Refused ? "refused: " : "still pending: ") + o.reason;
    c.html =
        fmt::format("<div class=\"refused\"><strong>{}</strong>: {}</div>{}", html::escape(outcome_text(o)),
                    html::escape(o.reason),
                    o.shortfall.empty() ? "" : "<div class=\"note\">" + html::escape(o.shortfall) + "</div>");
  }
  return c;
}
}  // namespace

CompareTable compare_table(const std::vector<ComparedRun>& runs) {
  CompareTable t;
  auto identity = [&](const char* key, const char* label, auto value_of) {
    CompareRow row{key, label, {}};
    for (const auto& r : runs) row.cells.push_back({value_of(r.run.summary), false});
    t.rows.push_back(std::move(row));
  };
  identity("scenario", "scenario", [](const Json& s) { return text(s, "scenario"); });
  identity("policy", "policy", [](const Json& s) { return text(s, "policy"); });
  identity("seed", "seed", [](const Json& s) { return text(s, "seed"); });
  identity("fleet", "fleet",
           [](const Json& s) { return fmt::format("{} nodes, {} GPUs", text(s, "nodes"), text(s, "gpus")); });
  for (const auto& m : headline_metrics()) {
    CompareRow row{std::string(m.key), std::string(m.label), {}};
    std::vector<std::optional<double>> values;
    for (const auto& r : runs) {
      values.push_back(headline_value(r.run.summary, m.key));
      row.cells.push_back({values.back() ? format_headline(m, *values.back()) : "-", false});
    }
    if (std::none_of(values.begin(), values.end(), [](const auto& v) { return v.has_value(); })) continue;
    // The best, where a direction is better and the runs differ as a person
    // reads them (41.881 % and 41.879 % are both "41.88 %": no best).
    if (m.better != HeadlineMetric::Better::Neither) {
      std::optional<double> extreme;
      for (const auto& v : values)
        if (v && (!extreme || (m.better == HeadlineMetric::Better::Lower ? *v < *extreme : *v > *extreme)))
          extreme = v;
      const std::string best = format_headline(m, *extreme);
      size_t shown = 0, at_best = 0;
      for (size_t i = 0; i < values.size(); ++i)
        if (values[i]) {
          ++shown;
          at_best += row.cells[i].text == best ? 1 : 0;
        }
      if (shown >= 2 && at_best < shown)
        for (auto& c : row.cells) c.best = c.text == best;
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::vector<CompareRow> compare_by_class(const std::vector<ComparedRun>& runs) {
  const char* kKey = "pending_seconds_by_priority_class";
  std::vector<std::string> classes;
  for (const auto& r : runs) {
    const Json& s = r.run.summary;
    if (!s.is_object() || !s.contains(kKey) || !s[kKey].is_object()) continue;
    for (auto it = s[kKey].begin(); it != s[kKey].end(); ++it)
      if (std::find(classes.begin(), classes.end(), it.key()) == classes.end()) classes.push_back(it.key());
  }
  struct Figure {
    const char* key;
    const char* label;
    bool wait;  // seconds, shorter is better; else a count
  };
  const Figure figures[] = {{"p50", "median", true},
                            {"p95", "95th percentile", true},
                            {"max", "longest", true},
                            {"placements", "placements", false}};
  std::vector<CompareRow> rows;
  for (const auto& cls : classes)
    for (const Figure& f : figures) {
      CompareRow row{std::string(kKey) + "." + cls + "." + f.key, "class " + cls + ": " + f.label, {}};
      std::vector<std::optional<double>> values;
      for (const auto& r : runs) {
        const Json& s = r.run.summary;
        std::optional<double> v;
        if (s.is_object() && s.contains(kKey) && s[kKey].is_object() && s[kKey].contains(cls) &&
            s[kKey][cls].is_object() && s[kKey][cls].contains(f.key) && s[kKey][cls][f.key].is_number())
          v = s[kKey][cls][f.key].get<double>();
        values.push_back(v);
        row.cells.push_back({!v       ? "-"
                             : f.wait ? human_duration(*v)
                                      : fmt::format("{}", static_cast<int64_t>(*v)),
                             false});
      }
      if (f.wait) {
        std::optional<double> least;
        size_t shown = 0;
        for (const auto& v : values)
          if (v) {
            ++shown;
            if (!least || *v < *least) least = v;
          }
        const bool differ = std::any_of(row.cells.begin(), row.cells.end(), [&](const CompareCell& c) {
          return c.text != "-" && c.text != human_duration(*least);
        });
        if (shown >= 2 && differ)
          for (auto& c : row.cells) c.best = c.text == human_duration(*least);
      }
      rows.push_back(std::move(row));
    }
  return rows;
}

std::vector<QueueRow> compare_queue(const std::vector<ComparedRun>& runs) {
  std::vector<std::string> order;
  std::vector<std::map<std::string, const PodRecord*>> by_name(runs.size());
  for (size_t i = 0; i < runs.size(); ++i)
    for (const PodRecord* p : queued_pods(runs[i].run.pods)) {
      if (by_name[i].emplace(p->name, p).second &&
          std::none_of(by_name.begin(), by_name.begin() + static_cast<long>(i),
                       [&](const auto& m) { return m.count(p->name) > 0; }))
        order.push_back(p->name);
    }
  std::vector<QueueRow> rows;
  for (const auto& name : order) {
    QueueRow row{name, {}, false};
    for (size_t i = 0; i < runs.size(); ++i) {
      const auto it = by_name[i].find(name);
      row.cells.push_back(queue_cell(it == by_name[i].end() ? nullptr : it->second, end_of(runs[i].run)));
      row.differs = row.differs || row.cells.back().terminal != row.cells.front().terminal;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace gpuslice::sim

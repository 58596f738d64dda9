#include "gpuslice/sim/run_folder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <optional>
#include <unordered_map>

#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/dialects/dialect.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/csv_table.hpp"
#include "gpuslice/sim/timeline_columns.hpp"

namespace gpuslice::sim {

namespace {
using core::InputError;

// The columns a reader needs, found by name in the header; optional ones
// read -1 when absent.
struct Columns {
  std::vector<std::string> header;
  int find(const std::string& name, const std::string& source, bool required = true) const {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it != header.end()) return static_cast<int>(it - header.begin());
    if (required) throw InputError(source, 1, name, "missing column");
    return -1;
  }
};

// A finite number; empty cells read `empty` where allowed.
double number(const std::vector<std::string>& cells, int col, const Columns& c, const std::string& source,
              int line, std::optional<double> empty = std::nullopt) {
  if (col < 0) return empty.value_or(0);
  const std::string& s = cells[static_cast<size_t>(col)];
  if (s.empty() && empty) return *empty;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
    throw InputError(source, line, c.header[static_cast<size_t>(col)],
                     fmt::format("'{}' is not a number", s));
  return v;
}

size_t count(const std::vector<std::string>& cells, int col, const Columns& c, const std::string& source,
             int line) {
  const double v = number(cells, col, c, source, line);
  if (v < 0 || v != std::floor(v) || v > 1e15)
    throw InputError(source, line, c.header[static_cast<size_t>(col)],
                     fmt::format("'{}' is not a non-negative integer", cells[static_cast<size_t>(col)]));
  return static_cast<size_t>(v);
}

nlohmann::ordered_json read_summary(const std::string& path) {
  const std::string text = core::codec::read_text_file(path);
  try {
    auto summary = nlohmann::ordered_json::parse(text);
    if (!summary.is_object()) throw InputError(path, 1, "", "summary.json must hold one JSON object");
    return summary;
  } catch (const nlohmann::json::parse_error& e) {
    const size_t upto = std::min(text.size(), static_cast<size_t>(e.byte));
    const int line =
        1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(upto), '\n'));
    throw InputError(path, line, "", fmt::format("not valid JSON: {}", e.what()));
  }
}

std::vector<TimelineRow> read_timeline(const std::string& path) {
  const std::string text = core::codec::read_text_file(path);
  std::vector<TimelineRow> rows;
  Columns c;
  const auto columns = timeline_columns();
  std::vector<int> at(columns.size(), -1);  // column -> its place in the file (-1: absent)
  for_each_csv_record(
      text, path,
      [&](const std::vector<std::string>& h) {
        c.header = h;
        for (size_t i = 0; i < columns.size(); ++i)
          at[i] = c.find(std::string(columns[i].name), path, !columns[i].optional_when_read);
      },
      [&](const std::vector<std::string>& cells, int line) {
        TimelineRow r;
        for (size_t i = 0; i < columns.size(); ++i) {
          const auto& column = columns[i];
          if (column.count)
            r.*column.count = at[i] < 0 ? 0 : count(cells, at[i], c, path, line);
          else
            r.*column.real = number(cells, at[i], c, path, line);
        }
        rows.push_back(r);
      });
  return rows;
}

std::vector<PodRecord> read_pods(const std::string& path) {
  const std::string text = core::codec::read_text_file(path);
  std::vector<PodRecord> pods;
  Columns c;
  int name = 0, kind = 0, milli = 0, arrival = 0, start = 0, end = 0, status = 0, node = 0, allocation = 0,
      reason = 0, origin = 0, shortfall = 0, claim_allocation = 0;
  for_each_csv_record(
      text, path,
      [&](const std::vector<std::string>& h) {
        c.header = h;
        name = c.find("name", path);
        kind = c.find("kind", path, false);
        milli = c.find("gpu_milli", path, false);
        arrival = c.find("arrival", path);
        start = c.find("start", path);
        end = c.find("end", path, false);
        status = c.find("status", path);
        node = c.find("node", path, false);
        allocation = c.find("allocation", path, false);
        reason = c.find("reason", path);
        origin = c.find("origin", path, false);  // snapshot runs (added later)
        shortfall = c.find("shortfall", path, false);
        claim_allocation = c.find("claim_allocation", path, false);  // --policy dra (added later)
      },
      [&](const std::vector<std::string>& cells, int line) {
        auto text_of = [&](int col) { return col < 0 ? std::string() : cells[static_cast<size_t>(col)]; };
        PodRecord p;
        p.name = text_of(name);
        p.kind = text_of(kind);
        p.gpu_milli = static_cast<int64_t>(milli < 0 ? 0 : count(cells, milli, c, path, line));
        p.arrival = number(cells, arrival, c, path, line);
        p.start = number(cells, start, c, path, line, -1.0);
        p.end = number(cells, end, c, path, line, -1.0);
        p.status = text_of(status);
        p.node = text_of(node);
        p.allocation = text_of(allocation);
        p.reason = text_of(reason);
        p.origin = text_of(origin);
        p.shortfall = text_of(shortfall);
        p.claim_allocation = text_of(claim_allocation);
        pods.push_back(std::move(p));
      },
      1);  // claim_allocation, appended last: a row written before it (or by hand) may lack it
  return pods;
}

// card_use.csv names nodes; the result numbers them in the order they first
// appear.
void read_card_use(const std::string& path, RunResult& run) {
  const std::string text = core::codec::read_text_file(path);
  std::unordered_map<std::string, uint32_t> node_ids;
  Columns c;
  int time = 0, node = 0, card = 0, slots = 0, memory = 0, cores = 0, card_memory = 0;
  for_each_csv_record(
      text, path,
      [&](const std::vector<std::string>& h) {
        c.header = h;
        time = c.find("time", path);
        node = c.find("node", path);
        card = c.find("card", path);
        slots = c.find("slots", path, false);
        memory = c.find("memory_mib", path);
        cores = c.find("cores", path);
        card_memory = c.find("card_memory_mib", path, false);  // added after the first release
      },
      [&](const std::vector<std::string>& cells, int line) {
        CardUseRow r;
        r.time = number(cells, time, c, path, line);
        const std::string& name = cells[static_cast<size_t>(node)];
        auto [it, added] = node_ids.emplace(name, static_cast<uint32_t>(run.node_names.size()));
        if (added) run.node_names.push_back(name);
        r.node = it->second;
        const size_t index = count(cells, card, c, path, line);
        if (index > 1024)
          throw InputError(path, line, "card", fmt::format("card index {} is too large", index));
        r.card = static_cast<int>(index);
        r.used.slots = static_cast<int32_t>(
            slots < 0 ? 0 : std::min<size_t>(count(cells, slots, c, path, line), 1u << 30));
        r.used.memory_mib = static_cast<int64_t>(count(cells, memory, c, path, line));
        r.used.cores = static_cast<int32_t>(std::min<size_t>(count(cells, cores, c, path, line), 1u << 30));
        r.card_memory_mib =
            card_memory < 0 ? 0 : static_cast<int64_t>(count(cells, card_memory, c, path, line));
        run.card_use.push_back(r);
      });
}
}  // namespace

RunResult read_run_folder(const std::string& dir, bool card_use) {
  const std::filesystem::path d(dir);
  std::error_code ec;
  if (!std::filesystem::is_directory(d, ec))
    throw InputError(dir, 0, "", "not a folder: give the --out folder of a gpuslice simulate run");
  RunResult run;
  run.summary = read_summary((d / "summary.json").string());
  run.timeline = read_timeline((d / "timeline.csv").string());
  run.pods = read_pods((d / "pods.csv").string());
  // A run whose policy records its unit's binding (dra) has the
  // claim_allocation column (written for those only).
  run.claim_allocations =
      core::dialects::binding_recorded_by(run.summary.value("policy", std::string())) != nullptr;
  // A run with --no-card-use has no card_use.csv: its report says so.
  if (card_use && std::filesystem::exists(d / "card_use.csv", ec))
    read_card_use((d / "card_use.csv").string(), run);
  return run;
}

}  // namespace gpuslice::sim

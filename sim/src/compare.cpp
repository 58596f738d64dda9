#include "gpuslice/sim/compare.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "compare_cells.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/csv_table.hpp"
#include "gpuslice/sim/headline.hpp"
#include "gpuslice/sim/report.hpp"
#include "gpuslice/sim/run_folder.hpp"
#include "gpuslice/sim/run_metrics.hpp"

namespace gpuslice::sim {

namespace {
using core::InputError;
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string text(const Json& s, const char* key) {
  if (!s.is_object() || !s.contains(key)) return {};
  const Json& v = s[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  return {};
}

fs::path canonical_or_absolute(const std::string& dir) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(dir, ec);
  return ec ? fs::absolute(dir) : p;
}

// The run's column names: the folder names, or the paths as given where two
// folders share a name (out/a/fgd and out/b/fgd).
std::vector<std::string> labels_of(const std::vector<std::string>& dirs) {
  std::vector<std::string> names;
  for (const auto& d : dirs) names.push_back(canonical_or_absolute(d).filename().string());
  std::vector<std::string> out;
  for (size_t i = 0; i < dirs.size(); ++i)
    out.push_back(std::count(names.begin(), names.end(), names[i]) > 1 ? dirs[i] : names[i]);
  return out;
}
}  // namespace

std::vector<ComparedRun> load_compared_runs(const std::vector<std::string>& dirs) {
  if (dirs.size() < 2)
    throw InputError("command line", 0, "dir",
                     "give at least two run folders (the --out folders of gpuslice simulate)");
  std::map<fs::path, std::string> seen;
  for (const auto& d : dirs)
    if (auto [it, fresh] = seen.emplace(canonical_or_absolute(d), d); !fresh)
      throw InputError(d, 0, "dir",
                       fmt::format("the same run folder as '{}': give each run once", it->second));
  const auto labels = labels_of(dirs);
  std::vector<ComparedRun> runs;
  for (size_t i = 0; i < dirs.size(); ++i)
    runs.push_back({labels[i], dirs[i], read_run_folder(dirs[i], false)});
  return runs;
}

std::string default_compare_folder(const std::vector<std::string>& dirs) {
  std::optional<fs::path> parent;
  for (const auto& d : dirs) {
    const fs::path p = canonical_or_absolute(d).parent_path();
    if (parent && *parent != p)
      throw InputError("command line", 0, "--out",
                       "the run folders are in different folders: say where compare.html goes (--out DIR)");
    parent = p;
  }
  return parent ? parent->string() : std::string(".");
}

std::string compare_csv(const std::vector<ComparedRun>& runs) {
  std::string out = "run,dir,scenario,policy,seed,run_kind,nodes,gpus";
  for (const auto& m : headline_metrics()) out += fmt::format(",{}", m.key);
  out += "\n";
  for (const auto& r : runs) {
    const Json& s = r.run.summary;
    out += fmt::format("{},{},{},{},{},{},{},{}", csv_cell(r.label), csv_cell(r.dir),
                       csv_cell(text(s, "scenario")), csv_cell(text(s, "policy")), text(s, "seed"),
                       csv_cell(text(s, "run_kind")), text(s, "nodes"), text(s, "gpus"));
    for (const auto& m : headline_metrics()) {
      const auto v = headline_value(s, m.key);
      if (!v)
        out += ",";
      else if (m.unit == HeadlineMetric::Unit::Count)
        out += fmt::format(",{}", std::llround(*v));
      else
        out += fmt::format(",{}", *v);
    }
    out += "\n";
  }
  return out;
}

void print_comparison(const std::vector<ComparedRun>& runs, std::ostream& out) {
  const CompareTable table = compare_table(runs);
  const auto queue = compare_queue(runs);
  // Column widths from the content: the label column, then one per run.
  size_t first = 26;
  for (const auto& row : table.rows) first = std::max(first, row.label.size());
  for (const auto& row : queue) first = std::max(first, row.pod.size());
  std::vector<size_t> width(runs.size(), 0);
  for (size_t i = 0; i < runs.size(); ++i) {
    width[i] = runs[i].label.size();
    for (const auto& row : table.rows) width[i] = std::max(width[i], row.cells[i].text.size() + 2);
    for (const auto& row : queue) width[i] = std::max(width[i], row.cells[i].terminal.size());
  }
  auto line = [&](const std::string& label, const std::vector<std::string>& cells) {
    std::string l = fmt::format("  {:<{}}", label, first);
    for (size_t i = 0; i < cells.size(); ++i) l += fmt::format("  {:<{}}", cells[i], width[i]);
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out << l << "\n";
  };
  fmt::print(out, "comparison of {} runs (* best, where lower or higher is better and the runs differ)\n",
             runs.size());
  std::vector<std::string> header;
  for (const auto& r : runs) header.push_back(r.label);
  line("", header);
  for (const auto& row : table.rows) {
    std::vector<std::string> cells;
    for (const auto& c : row.cells) cells.push_back(c.text + (c.best ? " *" : ""));
    line(row.label, cells);
  }
  if (!queue.empty()) {
    out << "queue (pending at the snapshot), pod by pod\n";
    for (const auto& row : queue) {
      std::vector<std::string> cells;
      for (const auto& c : row.cells) cells.push_back(c.terminal);
      line(row.pod, cells);
    }
  }
}

void write_comparison(const std::vector<ComparedRun>& runs, const std::string& dir) {
  prepare_output_folder(dir);
  const auto write = [&](const char* name, const std::string& content) {
    const fs::path path = fs::path(dir) / name;
    std::ofstream f(path, std::ios::binary);
    if (!f || !(f << content) || !f.flush())
      throw OutputError(fmt::format("cannot write '{}'", path.string()));
  };
  write("compare.csv", compare_csv(runs));
  write("compare.html", render_compare_html(runs));
}

}  // namespace gpuslice::sim

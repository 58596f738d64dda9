#include "gpuslice/realgpu/labs.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <map>

#include "gpuslice/core/errors.hpp"
#include "labs_bench.hpp"

namespace gpuslice::realgpu {

using nlohmann::json;

const char* status_name(RowStatus s) {
  switch (s) {
    case RowStatus::Pass:
      return "PASS";
    case RowStatus::Fail:
      return "FAIL";
    case RowStatus::Skip:
      return "SKIP";
    case RowStatus::Info:
      return "INFO";
  }
  return "?";
}

bool LabsReport::passed() const {
  for (const auto& r : rows)
    if (r.status == RowStatus::Fail) return false;
  return !rows.empty();
}

json LabsReport::to_json() const {
  json out = {{"driver", driver}, {"date", date}, {"passed", passed()}};
  std::map<std::string, int> counts;
  for (const auto& r : rows) ++counts[status_name(r.status)];
  out["counts"] = counts;
  out["labs"] = json::array();
  for (const auto& l : labs)
    out["labs"].push_back(
        {{"lab", l.lab}, {"title", l.title}, {"seed", l.seed_setting}, {"here", l.our_setting}});
  out["rows"] = json::array();
  for (const auto& r : rows)
    out["rows"].push_back({{"lab", r.lab},
                           {"step", r.step},
                           {"title", r.title},
                           {"criteria", r.criteria},
                           {"seed", r.seed},
                           {"ours", r.ours},
                           {"context", r.context},
                           {"status", status_name(r.status)},
                           {"passed", r.status == RowStatus::Pass},
                           {"why", r.why},
                           {"workload", r.workload},
                           {"driver", r.driver},
                           {"gpu", r.gpu},
                           {"driver_version", r.driver_version},
                           {"date", r.date},
                           {"figures", r.figures}});
  return out;
}

namespace {
// Table cells: no newlines, no bare pipes.
std::string cell(std::string text) {
  for (char& c : text)
    if (c == '\n') c = ' ';
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}
}  // namespace

void LabsReport::print(std::ostream& out) const {
  out << fmt::format("gpuslice realgpu labs: {} driver, {}\n", driver, date);
  for (const auto& l : labs) {
    out << fmt::format("\n## Lab {}: {}\nseed: {}\nhere: {}\n\n", l.lab, l.title, l.seed_setting,
                       l.our_setting);
    out << "| step | check | seed | ours | context | result |\n|---|---|---|---|---|---|\n";
    std::string rules;
    for (const auto& r : rows) {
      if (r.lab != l.lab) continue;
      const std::string result =
          r.why.empty() ? status_name(r.status) : fmt::format("{}: {}", status_name(r.status), r.why);
      out << fmt::format("| {}.{} | {} | {} | {} | {} | {} |\n", r.lab, r.step, cell(r.title), cell(r.seed),
                         cell(r.ours), r.context.empty() ? "-" : cell(r.context), cell(result));
      rules += fmt::format("- {}.{} ({}): {}\n", r.lab, r.step, r.workload, r.criteria);
    }
    out << "\nPass rules and what ran:\n" << rules;
  }
  std::map<std::string, int> counts;
  for (const auto& r : rows) ++counts[status_name(r.status)];
  out << fmt::format("\n{} PASS, {} FAIL, {} SKIP, {} INFO: {}\n", counts["PASS"], counts["FAIL"],
                     counts["SKIP"], counts["INFO"],
                     passed() ? "every row that can be shown here passed" : "SOME ROWS FAILED");
}

LabsReport run_labs(const LabsOptions& options) {
  using Lab = void (*)(labs::Bench&);
  const std::vector<std::pair<std::string, Lab>> all = {{"000", labs::lab_000},
                                                        {"001", labs::lab_001},
                                                        {"002", labs::lab_002},
                                                        {"overhead", labs::lab_overhead}};
  bool known = options.lab == "all";
  for (const auto& [name, lab] : all) known = known || options.lab == name;
  if (!known) throw core::InputError("command line", 0, "--lab", "use all, 000, 001, 002 or overhead");
  if (!options.compare_libvgpu.empty() && access(options.compare_libvgpu.c_str(), R_OK) != 0)
    throw core::InputError(options.compare_libvgpu, 0, "--compare-libvgpu", "no readable file there");
  labs::Bench bench(options);
  const size_t total = options.lab == "all" ? all.size() : 1;
  size_t done = 0;
  for (const auto& [name, lab] : all) {
    if (options.lab != "all" && options.lab != name) continue;
    if (options.progress) options.progress(done++, total, "lab " + name);
    try {
      lab(bench);
    } catch (const std::exception& e) {  // the lab could not start: one row says why
      bench.lab_failed(name, e.what());
    }
  }
  if (options.progress) options.progress(total, total, "");
  return bench.take_report();
}

}  // namespace gpuslice::realgpu

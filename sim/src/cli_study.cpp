// `gpuslice study`: the FGD study's grid on openb, on all cores, with the
// artifact's published means beside ours.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>

#include "gpuslice/cli/grammar.hpp"
#include "gpuslice/cli/progress.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/cli.hpp"
#include "gpuslice/sim/study.hpp"

namespace gpuslice::sim {

namespace {

struct StudyArgs {
  std::string nodes, policies, seeds = "42-51", out, published;
  std::vector<std::string> pods;
  double tune = 1.3;
  int jobs = 0;
  bool quiet = false;
};

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t c = s.find(',', pos);
    out.push_back(s.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return out;
}

std::ofstream open_out(const std::filesystem::path& path) {
  std::ofstream f(path);
  if (!f) throw core::InputError(path.string(), 0, "--out", "cannot write");
  return f;
}

std::string num(const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : std::string(); }

void write_study(const std::vector<StudyRun>& runs, const StudyArgs& a, const StudyOptions& options,
                 std::ostream& console) {
  std::filesystem::path dir(a.out);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw core::InputError(a.out, 0, "--out", ec.message());
  auto runs_csv = open_out(dir / "runs.csv");
  runs_csv << "trace,policy,seed,alloc_130,unallocated_gpus_130,frag_130,wall_s\n";
  auto curves_csv = open_out(dir / "curves.csv");
  curves_csv << "trace,policy,seed,arrived_pct,alloc_pct,frag_pct\n";
  for (const auto& r : runs) {
    runs_csv << fmt::format("{},{},{},{:.2f},{:.1f},{:.2f},{:.3f}\n", r.trace, r.policy, r.seed, r.alloc_130,
                            r.unallocated_gpus_130, r.frag_130, r.wall_s);
    for (size_t x = 0; x < r.alloc.size(); ++x)
      curves_csv << fmt::format("{},{},{},{},{},{}\n", r.trace, r.policy, r.seed, x, num(r.alloc[x]),
                                num(r.frag[x]));
  }

  std::map<std::pair<std::string, std::string>, std::vector<double>> published;
  PublishedCurves published_curves;
  if (!a.published.empty()) {
    published = load_published(a.published);
    published_curves = load_published_curves(a.published);
  }
  auto table_csv = open_out(dir / "table.csv");
  table_csv << "trace,policy,runs,mean,min,max" << (a.published.empty() ? "\n" : ",published_mean,diff\n");
  console << fmt::format("{:<34} {:<14} {:>5} {:>7} {:>7} {:>7}", "trace", "policy", "runs", "mean", "min",
                         "max")
          << (a.published.empty() ? "\n" : fmt::format(" {:>9} {:>6}\n", "published", "diff"));
  const auto cells = study_cells(runs, published);
  for (const auto& c : cells) {
    std::string line =
        fmt::format("{},{},{},{:.2f},{:.2f},{:.2f}", c.trace, c.policy, c.runs, c.mean, c.min, c.max);
    std::string shown = fmt::format("{:<34} {:<14} {:>5} {:>7.2f} {:>7.2f} {:>7.2f}", c.trace, c.policy,
                                    c.runs, c.mean, c.min, c.max);
    if (!a.published.empty()) {
      if (c.published) {
        line += fmt::format(",{:.2f},{:+.2f}", *c.published, c.mean - *c.published);
        shown += fmt::format(" {:>9.2f} {:>+6.2f}", *c.published, c.mean - *c.published);
      } else {
        line += ",,";
      }
    }
    table_csv << line << "\n";
    console << shown << "\n";
  }
  auto report = open_out(dir / "report.html");
  report << render_study_html(runs, cells, published_curves, options);
  if (!report.flush()) throw core::InputError((dir / "report.html").string(), 0, "--out", "cannot write");
}

}  // namespace

void register_study_cli(CLI::App& app) {
  auto a = std::make_shared<StudyArgs>();
  auto* cmd = app.add_subcommand("study", "Run the FGD study's grid (traces x policies x seeds) on openb");
  cmd->add_option("--openb-nodes", a->nodes, "openb node list CSV")->required();
  cmd->add_option("--openb-pods", a->pods, "openb pod list CSV(s), one trace each")->required();
  cmd->add_option("--policies,--policy", a->policies,
                  "comma list (default: random,dotprod,gpuclustering,gpupacking,bestfit,fgd); any registered "
                  "policy, e.g. hami-binpack, koordinator, kai-binpack (docs/dialects.md)");
  cmd->add_option("--seeds,--seed", a->seeds, "seeds, e.g. 42-51 or 42,44 (default 42-51)");
  cmd->add_option("--tune", a->tune, "GPU demand as a multiple of capacity (default 1.3)");
  cmd->add_option("--jobs", a->jobs, "parallel runs (default 0: one per core)")
      ->check(cli::whole_number(0, 4096));
  cmd->add_flag("--quiet", a->quiet, "no progress line (it is shown only when stderr is a terminal)");
  cmd->add_option("--out", a->out, "output folder (runs.csv, curves.csv, table.csv, report.html)")
      ->required();
  cmd->add_option(
      "--published", a->published,
      "the artifact's analysis_allo_discrete.csv, to compare with (its curves drawn in report.html)");
  cmd->callback([a] {
    StudyOptions o;
    if (!a->policies.empty()) o.policies = split_names(a->policies);
    o.seeds = parse_seed_list(a->seeds, "--seeds");
    if (!(a->tune > 0 && a->tune <= 10))
      throw core::InputError("command line", 0, "--tune", fmt::format("'{}' is not in (0, 10]", a->tune));
    o.tune = a->tune;
    if (a->jobs < 0 || a->jobs > 4096)
      throw core::InputError("command line", 0, "--jobs", fmt::format("'{}' is not in 0..4096", a->jobs));
    o.jobs = static_cast<unsigned>(a->jobs);
    if (!a->published.empty()) load_published(a->published);  // fail early, before the grid
    cli::Progress progress("study", a->quiet);
    if (progress.shown())
      o.progress = [&progress](size_t done, size_t total) {
        progress.step(done, total, "trace x seed groups");
      };
    const auto runs = run_study(a->nodes, a->pods, o);
    progress.finish();
    write_study(runs, *a, o, std::cout);
    std::cout << "  outputs  " << a->out << "/{runs.csv,curves.csv,table.csv,report.html}\n";
  });
}

}  // namespace gpuslice::sim

#include "gpuslice/sim/report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gpuslice/sim/html_report.hpp"

namespace gpuslice::sim {

namespace {
std::ofstream open_out(const std::filesystem::path& p) {
  std::ofstream f(p);
  if (!f) throw OutputError(fmt::format("cannot write '{}': {}", p.string(), std::strerror(errno)));
  return f;
}

// CSV cells with commas or quotes are quoted (allocations contain commas).
std::string cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string number(double v) { return v < 0 ? std::string() : fmt::format("{:.3f}", v); }
}  // namespace

void prepare_output_folder(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw OutputError(fmt::format("cannot create the output folder '{}': {}", dir, ec.message()));
  if (!std::filesystem::is_directory(dir, ec))
    throw OutputError(fmt::format("the output folder '{}' is not a folder", dir));
  const auto probe = std::filesystem::path(dir) / ".gpuslice-write-check";
  open_out(probe).close();
  std::filesystem::remove(probe, ec);
}

void write_outputs(const RunResult& r, const std::string& dir) {
  const std::filesystem::path d(dir);
  prepare_output_folder(dir);
  open_out(d / "summary.json") << r.summary.dump(2, ' ', false,
                                                 nlohmann::ordered_json::error_handler_t::replace)
                               << "\n";
  {
    auto f = open_out(d / "timeline.csv");
    f << "time,running,pending,placed,failed,arrived_gpu_pct,alloc_gpu_pct,alloc_memory_pct,alloc_cores_pct,"
         "busy_cards_pct,frag_gpu_pct\n";
    for (const auto& t : r.timeline)
      fmt::print(f, "{:.3f},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f}\n", t.time, t.running,
                 t.pending, t.placed, t.failed, t.arrived_pct, t.alloc_gpu_pct, t.alloc_memory_pct,
                 t.alloc_cores_pct, t.busy_cards_pct, t.frag_gpu_pct);
  }
  {
    auto f = open_out(d / "pods.csv");
    f << "name,kind,gpu_milli,arrival,start,end,pending_seconds,status,node,allocation,reason\n";
    for (const auto& p : r.pods)
      fmt::print(f, "{},{},{},{},{},{},{},{},{},{},{}\n", cell(p.name), cell(p.kind), p.gpu_milli,
                 number(p.arrival), number(p.start), number(p.end),
                 p.start >= 0 ? number(p.start - p.arrival) : std::string(), p.status, cell(p.node),
                 cell(p.allocation), cell(p.reason));
  }
  if (!r.node_names.empty()) {
    // Per-card use over time: one row each time a placement or departure
    // changes a card (use before the first row is zero).
    auto f = open_out(d / "card_use.csv");
    f << "time,node,card,slots,memory_mib,cores,card_memory_mib\n";
    for (const auto& c : r.card_use)
      fmt::print(f, "{:.3f},{},{},{},{},{},{}\n", c.time, cell(r.node_names[c.node]), c.card, c.used.slots,
                 c.used.memory_mib, c.used.cores, c.card_memory_mib);
  }
  {
    auto f = open_out(d / "events.jsonl");
    for (const auto& e : r.events)
      f << nlohmann::ordered_json{{"time", e.time},
                                  {"pod", e.pod},
                                  {"type", e.type},
                                  {"reason", e.reason},
                                  {"message", e.message}}
               .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
        << "\n";
  }
  write_report(r, dir);
}

void print_table(const RunResult& r, std::ostream& out) {
  const auto& s = r.summary;
  auto opt = [](const nlohmann::ordered_json& v) {
    return v.is_null() ? std::string("-") : fmt::format("{:.2f}%", v.get<double>());
  };
  fmt::print(out, "scenario {}  policy {}  seed {}\n", s["scenario"].get<std::string>(),
             s["policy"].get<std::string>(), s["seed"].get<uint64_t>());
  fmt::print(out, "  fleet              {} nodes, {} GPUs\n", s["nodes"].get<size_t>(),
             s["gpus"].get<size_t>());
  fmt::print(out, "  pods               {} arrived, {} placed, {} failed ({} refused, {} still pending)\n",
             s["pods"].get<size_t>(), s["placements"].get<size_t>(), s["failed"].get<size_t>(),
             s["refused"].get<size_t>(), s["pending_at_end"].get<size_t>());
  fmt::print(out,
             "  GPU allocation     {:.2f}% at the end, {:.2f}% at peak (memory {:.2f}%, cores {:.2f}%)\n",
             s["final_alloc_gpu_pct"].get<double>(), s["peak_alloc_gpu_pct"].get<double>(),
             s["final_alloc_memory_pct"].get<double>(), s["final_alloc_cores_pct"].get<double>());
  fmt::print(out, "  at 130% arrived    {}\n", opt(s["alloc_ratio_at_130_pct"]));
  fmt::print(out, "  fragmented GPU     {:.2f}% of capacity at the end ({} typical pod shapes)\n",
             s["final_frag_gpu_pct"].get<double>(), s["typical_pod_shapes"].get<size_t>());
  const auto& p = s["pending_seconds"];
  fmt::print(out, "  pending (s)        p50 {:.1f}  p95 {:.1f}  p99 {:.1f}  max {:.1f}\n",
             p["p50"].get<double>(), p["p95"].get<double>(), p["p99"].get<double>(), p["max"].get<double>());
  for (auto it = s["refusals_by_reason"].begin(); it != s["refusals_by_reason"].end(); ++it)
    fmt::print(out, "  not placed         {} x {}\n", it.value().get<size_t>(), it.key());
  fmt::print(out, "  wall time          {:.3f} s ({:.0f} pods/s)\n", s["wall_seconds"].get<double>(),
             s["pods_per_second"].get<double>());
}

}  // namespace gpuslice::sim

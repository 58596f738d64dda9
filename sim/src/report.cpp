#include "gpuslice/sim/report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/sim/csv_table.hpp"
#include "gpuslice/sim/html_report.hpp"
#include "gpuslice/sim/timeline_columns.hpp"

namespace gpuslice::sim {

namespace {
std::ofstream open_out(const std::filesystem::path& p) {
  std::ofstream f(p);
  if (!f) throw OutputError(fmt::format("cannot write '{}': {}", p.string(), std::strerror(errno)));
  return f;
}

std::string number(double v) { return v < 0 ? std::string() : fmt::format("{:.3f}", v); }

// The cards an allocation annotation names, each once, in order ("GPU-a GPU-b").
std::string cards_of(const std::string& allocation) {
  if (allocation.empty()) return {};
  std::vector<std::string> cards;
  try {
    for (const auto& container : core::codec::decode_allocation_text(allocation))
      for (const auto& g : container) {
        std::string card(core::codec::card_of(g.uuid));
        if (std::find(cards.begin(), cards.end(), card) == cards.end()) cards.push_back(std::move(card));
      }
  } catch (const core::CodecError&) {
    return {};  // we wrote it; cannot happen
  }
  return fmt::format("{}", fmt::join(cards, " "));
}

// Under DRA the cards are the claim's devices, "driver/pool/device", each once, in order.
std::string cards_of(const PodRecord& p) {
  if (p.claim_allocation.empty()) return cards_of(p.allocation);
  std::vector<std::string> cards;
  const auto result = nlohmann::json::parse(p.claim_allocation, nullptr, false);
  if (result.is_discarded()) return {};  // we wrote it; cannot happen
  for (const auto& r : result["devices"]["results"]) {
    std::string card = fmt::format("{}/{}/{}", r["driver"].get<std::string>(), r["pool"].get<std::string>(),
                                   r["device"].get<std::string>());
    if (std::find(cards.begin(), cards.end(), card) == cards.end()) cards.push_back(std::move(card));
  }
  return fmt::format("{}", fmt::join(cards, " "));
}

// A JSON string as nlohmann's dump(-1, ' ', false, replace) writes it:
// printable ASCII needs only '"' and '\\' escaped; anything else (control
// characters, UTF-8, invalid bytes) is left to nlohmann itself.
void append_json_string(fmt::memory_buffer& out, std::string_view s) {
  // Copied in runs between the characters escaped: byte by byte it was 3.6 %
  // of a preempting openb run's instructions (events.jsonl is most strings).
  const size_t mark = out.size();
  out.push_back('"');
  const char* run = s.data();
  for (const char& c : s) {
    if (c < 0x20 || c > 0x7e) {
      out.resize(mark);
      const std::string dumped = nlohmann::ordered_json(std::string(s))
                                     .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
      out.append(std::string_view(dumped));
      return;
    }
    if (c != '"' && c != '\\') continue;
    out.append(run, &c);
    out.push_back('\\');
    run = &c;  // the character itself opens the next run
  }
  out.append(run, s.data() + s.size());
  out.push_back('"');
}

void append_json_field(fmt::memory_buffer& out, std::string_view key, std::string_view value) {
  out.push_back(',');
  append_json_string(out, key);
  out.push_back(':');
  append_json_string(out, value);
}

// A number as nlohmann writes a double (shortest round trip, "7822.0", null
// when not finite): no heap, the text fits the small-string buffer.
void append_json_number(fmt::memory_buffer& out, double v) {
  out.append(std::string_view(nlohmann::ordered_json(v).dump()));
}

const nlohmann::ordered_json* find(const nlohmann::ordered_json& j, const char* key) {
  return j.contains(key) ? &j[key] : nullptr;
}
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
    const auto columns = timeline_columns();
    for (size_t i = 0; i < columns.size(); ++i) f << (i ? "," : "") << columns[i].name;
    f << "\n";
    fmt::memory_buffer line;
    for (const auto& t : r.timeline) {
      line.clear();
      for (size_t i = 0; i < columns.size(); ++i) {
        const auto& c = columns[i];
        if (i) line.push_back(',');
        if (c.count)
          fmt::format_to(std::back_inserter(line), "{}", t.*c.count);
        else if (c.kind == TimelineColumn::Kind::Seconds)
          fmt::format_to(std::back_inserter(line), "{:.3f}", t.*c.real);
        else
          fmt::format_to(std::back_inserter(line), "{:.4f}", t.*c.real);
      }
      line.push_back('\n');
      f.write(line.data(), static_cast<std::streamsize>(line.size()));
    }
  }
  {
    auto f = open_out(d / "pods.csv");
    // origin, cards and shortfall were added for snapshot runs (queue |
    // later; the cards granted; how close the best card came when not placed);
    // claim_allocation for `--policy dra` only (the claim's allocation
    // result): every other run's pods.csv keeps its 14 columns, which
    // readers anchored on the line's end rely on. Under dra `allocation`
    // holds the claim's allocation result too (the contract: a DRA
    // pod holds no HAMi annotation); the record keeps HAMi's notation of the
    // same grants for the in-memory readers (Python's card_usage).
    f << "name,kind,gpu_milli,arrival,start,end,pending_seconds,status,node,allocation,reason,origin,cards,"
         "shortfall"
      << (r.claim_allocations ? ",claim_allocation\n" : "\n");
    for (const auto& p : r.pods) {
      if (p.starting) continue;  // a snapshot's pod placed before the run
      fmt::print(f, "{},{},{},{},{},{},{},{},{},{},{},{},{},{}", csv_cell(p.name), csv_cell(p.kind),
                 p.gpu_milli, number(p.arrival), number(p.start), number(p.end),
                 p.start >= 0 ? number(p.start - p.arrival) : std::string(), p.status, csv_cell(p.node),
                 csv_cell(r.claim_allocations ? p.claim_allocation : p.allocation), csv_cell(p.reason),
                 p.origin, csv_cell(cards_of(p)), csv_cell(p.shortfall));
      if (r.claim_allocations) fmt::print(f, ",{}", csv_cell(p.claim_allocation));
      f << "\n";
    }
  }
  if (!r.node_names.empty()) {
    // Per-card use over time: one row each time a placement or departure
    // changes a card (use before the first row is zero).
    auto f = open_out(d / "card_use.csv");
    f << "time,node,card,slots,memory_mib,cores,card_memory_mib\n";
    for (const auto& c : r.card_use)
      fmt::print(f, "{:.3f},{},{},{},{},{},{}\n", c.time, csv_cell(r.node_names[c.node]), c.card,
                 c.used.slots, c.used.memory_mib, c.used.cores, c.card_memory_mib);
  }
  {
    // One buffer, lines written as nlohmann's dump would write them (the
    // events are most of a preemption run's output; an object per line
    // cost more than the run's placements).
    auto f = open_out(d / "events.jsonl");
    fmt::memory_buffer out;
    for (const auto& e : r.events) {
      out.append(std::string_view("{\"time\":"));
      append_json_number(out, e.time);
      append_json_field(out, "pod", e.pod);
      append_json_field(out, "type", e.type);
      append_json_field(out, "reason", e.reason);
      append_json_field(out, "message", e.message);
      if (!e.related.empty()) append_json_field(out, "related", e.related);  // a Preempted event's preemptor
      if (!e.node.empty()) append_json_field(out, "node", e.node);           // a node's event (ScaleDown)
      out.append(std::string_view("}\n"));
      if (out.size() >= (1u << 20)) {
        f.write(out.data(), static_cast<std::streamsize>(out.size()));
        out.clear();
      }
    }
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
  }
  write_report(r, dir);
}

void print_table(const RunResult& r, std::ostream& out) {
  const auto& s = r.summary;
  const std::string kind = s.value("run_kind", "no-departures");
  fmt::print(out, "scenario {}  policy {}  seed {}  ({})\n", s["scenario"].get<std::string>(),
             s["policy"].get<std::string>(), s["seed"].get<uint64_t>(),
             kind == "no-departures" ? "pods arrive, none leaves: the study's model"
             : kind == "departures"  ? "pods come and go"
                                     : "from a cluster snapshot");
  fmt::print(out, "  fleet              {} nodes, {} GPUs\n", s["nodes"].get<size_t>(),
             s["gpus"].get<size_t>());
  if (const auto* groups = find(s, "node_groups")) {
    for (const auto& g : *groups)
      fmt::print(
          out,
          "  node group {:<8} {} scale-ups, {} scale-downs, peak {} nodes, {:.1f} node-hours, cost {:.2f}\n",
          g.value("name", ""), g.value("scale_ups", size_t{0}), g.value("scale_downs", size_t{0}),
          g.value("peak_nodes", 0), g.value("node_hours", 0.0), g.value("cost", 0.0));
    fmt::print(out, "  cost               {:.2f} ({} expander)\n", s.value("cost", 0.0),
               s.value("expander", std::string()));
  }
  if (const auto* snap = find(s, "snapshot")) {
    const auto& j = *snap;
    fmt::print(out,
               "  snapshot           {} nodes ({} added), {} GPU pods running, {} pending in the queue\n",
               j["nodes"].get<size_t>(), j["added_nodes"].get<size_t>(), j["running_gpu_pods"].get<size_t>(),
               j["queue"].get<size_t>());
    for (auto it = j["skipped"].begin(); it != j["skipped"].end(); ++it)
      fmt::print(out, "  skipped            {} pod{} {}\n", it.value().get<size_t>(),
                 it.value().get<size_t>() == 1 ? "" : "s", it.key());
    for (const auto& w : j["warnings"]) fmt::print(out, "  warning            {}\n", w.get<std::string>());
  }
  fmt::print(out, "  pods               {} arrived, {} placed, {} refused, {} still pending at the end\n",
             s["pods"].get<size_t>(), s["placements"].get<size_t>(), s["refused"].get<size_t>(),
             s["pending_at_end"].get<size_t>());
  fmt::print(out, "  simulated time     {}\n", s["simulated_time"].get<std::string>());
  if (const auto* tw = find(s, "alloc_gpu_pct_time_weighted"))
    fmt::print(
        out,
        "  GPU allocation     {:.2f}% on average over time, {:.2f}% at peak (memory {:.2f}% / {:.2f}%, "
        "cores {:.2f}% / {:.2f}%)\n",
        tw->get<double>(), s["peak_alloc_gpu_pct"].get<double>(),
        s["alloc_memory_pct_time_weighted"].get<double>(), s["peak_alloc_memory_pct"].get<double>(),
        s["alloc_cores_pct_time_weighted"].get<double>(), s["peak_alloc_cores_pct"].get<double>());
  else
    fmt::print(out, "  GPU allocation     {:.2f}% at the end (memory {:.2f}%, cores {:.2f}%)\n",
               s["final_alloc_gpu_pct"].get<double>(), s["final_alloc_memory_pct"].get<double>(),
               s["final_alloc_cores_pct"].get<double>());
  if (const auto* at130 = find(s, "alloc_ratio_at_130_pct"); at130 && !at130->is_null())
    fmt::print(out, "  at 130% arrived    {:.2f}% of GPUs allocated\n", at130->get<double>());
  if (const auto* frag = find(s, "final_frag_gpu_pct"))
    fmt::print(out, "  fragmented GPU     {:.2f}% of capacity at the end ({} typical pod shapes)\n",
               frag->get<double>(), s["typical_pod_shapes"].get<size_t>());
  const auto& p = s["pending_seconds"];
  const size_t waiting = s.value("pending_includes_waiting", size_t{0});
  fmt::print(
      out, "  pending            p50 {}  p95 {}  p99 {}  max {}{}\n", human_duration(p["p50"].get<double>()),
      human_duration(p["p95"].get<double>()), human_duration(p["p99"].get<double>()),
      human_duration(p["max"].get<double>()),
      waiting ? fmt::format(" (counting {} pods still waiting, with their wait so far)", waiting) : "");
  for (auto it = s["refusals_by_reason"].begin(); it != s["refusals_by_reason"].end(); ++it)
    fmt::print(out, "  not placed         {} x {}\n", it.value().get<size_t>(), it.key());
  // A snapshot's queue, pod by pod: where each goes, or why not. The grants
  // are written in HAMi's annotation form; under Koordinator or KAI they are
  // that notation of the dialect's own grants.
  const bool hami = core::make_policy(s["policy"].get<std::string>())->dialect() == core::Dialect::Hami;
  const char* grants = hami ? "hami.io/vgpu-devices-allocated" : "grants (HAMi's notation)";
  size_t shown = 0, queued = 0;
  for (const auto& pod : r.pods) {
    if (pod.origin != "queue") continue;
    if (queued++ == 0) out << "  queue (pending at the snapshot, in creation order)\n";
    if (shown >= 20) continue;
    ++shown;
    if (pod.start >= 0) {
      // Under dra the claim's allocation result stands for the grants (a
      // run folder read back holds it in `allocation` too).
      const bool claimed = !pod.claim_allocation.empty();
      fmt::print(
          out, "    {:<28} -> {} {}{}\n", pod.name, pod.node, cards_of(pod),
          pod.start > pod.arrival ? fmt::format(" after {}", human_duration(pod.start - pod.arrival)) : "");
      if (!claimed) fmt::print(out, "      {}: {}\n", grants, pod.allocation);
      if (!pod.mig_allocations.empty())
        fmt::print(out, "      hami.io/vgpu-mig-allocations: {}\n", pod.mig_allocations);
      if (claimed) fmt::print(out, "      claim allocation: {}\n", pod.claim_allocation);
    } else {
      fmt::print(out, "    {:<28} {} ({}){}{}\n", pod.name,
                 pod.status == "refused" ? "refused" : "still pending", pod.reason,
                 pod.shortfall.empty() ? "" : ": ", pod.shortfall);
    }
  }
  if (queued > shown) fmt::print(out, "    ... {} more in pods.csv\n", queued - shown);
  fmt::print(out, "  wall time          {:.3f} s ({:.0f} pods/s)\n", s["wall_seconds"].get<double>(),
             s["pods_per_second"].get<double>());
}

}  // namespace gpuslice::sim

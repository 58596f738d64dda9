// report.html's reductions, read from the JSON the page embeds: bounded
// sizes on a large run, the heatmap's time-weighted means and the pending
// histogram on hand-made runs with known answers; and the run read back
// from its files draws the same page.
#include "gpuslice/sim/html_report.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/sim/fleet.hpp"
#include "gpuslice/sim/report.hpp"
#include "gpuslice/sim/run_folder.hpp"

using namespace gpuslice;
using namespace gpuslice::sim;
using Json = nlohmann::ordered_json;

namespace {
Json page_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const size_t from = html.find(open);
  REQUIRE(from != std::string::npos);
  const size_t to = html.find("</script>", from);
  return Json::parse(html.substr(from + open.size(), to - from - open.size()));
}

CardUseRow use(double time, uint32_t node, int card, int64_t memory, int64_t card_memory = 1000) {
  CardUseRow r;
  r.time = time;
  r.node = node;
  r.card = card;
  r.used.memory_mib = memory;
  r.used.slots = memory > 0 ? 1 : 0;
  r.card_memory_mib = card_memory;
  return r;
}

TimelineRow at(double time) {
  TimelineRow t;
  t.time = time;
  return t;
}
}  // namespace

TEST_CASE("report: a large run is reduced to the page's bounds") {
  RunResult run;
  run.summary = {{"scenario", "big"}};
  for (int i = 0; i <= 100000; ++i) run.timeline.push_back(at(i));
  for (uint32_t n = 0; n < 5000; ++n) {
    run.node_names.push_back("node-" + std::to_string(n));
    for (int c = 0; c < 2; ++c) run.card_use.push_back(use(n, n, c, 500));
  }
  const Json d = page_data(render_report_html(run));
  CHECK(d["timeline"]["time"].size() <= 2001);
  CHECK(d["timeline"]["time"].back() == 100000.0);  // the last record is always kept
  CHECK(d["timeline"]["records"] == 100001);
  CHECK(d["heatmap"]["cards"] == 10000);
  CHECK(d["heatmap"]["cards_per_row"] == 50);
  CHECK(d["heatmap"]["rows"] == 200);
  CHECK(d["heatmap"]["values"].size() == 200 * 200);
  CHECK(d["heatmap"]["row_labels"][0] == "node-0/0 +49");
}

TEST_CASE("report: the heatmap cell is the time-weighted mean use of its cards") {
  ReportLimits limits;
  limits.heatmap_columns = 2;
  RunResult run;
  run.node_names = {"a"};
  run.timeline = {at(0), at(100)};
  // Card a/0 is 60 % full from 0 to 25 and 20 % full from 25 to 100.
  run.card_use = {use(0, 0, 0, 600), use(25, 0, 0, 200)};
  const Json d = page_data(render_report_html(run, limits));
  REQUIRE(d["heatmap"]["columns"] == 2);
  // First half: (60 x 25 + 20 x 25) / 50 = 40; second half: 20.
  CHECK(d["heatmap"]["values"] == Json::array({40, 20}));
  CHECK(d["heatmap"]["metric"] == "memory");
}

TEST_CASE("report: pending times are binned in round widths, pods still waiting apart") {
  ReportLimits limits;
  limits.pending_bins = 4;
  RunResult run;
  run.timeline = {at(0), at(400)};
  auto pod = [](double arrival, double start, const std::string& status) {
    PodRecord p;
    p.arrival = arrival;
    p.start = start;
    p.status = status;
    return p;
  };
  run.pods = {pod(0, 0, "running"),    pod(0, 50, "running"),   pod(0, 150, "completed"),
              pod(100, -1, "pending"), pod(300, -1, "pending"), pod(0, -1, "refused"),
              pod(0, 0, "running")};
  run.pods[5].reason = "CardInsufficientMemory";
  run.pods[3].reason = run.pods[4].reason = "WaitingInQueue";
  run.pods[6].starting = true;  // a snapshot's pod running before the run: it did not wait in it
  const Json d = page_data(render_report_html(run, limits));
  const Json& p = d["pending"];
  CHECK(p["placed_at_once"] == 1);
  CHECK(p["placed_after_waiting"] == 2);
  CHECK(p["still_waiting"] == 2);
  // The longest wait is 300 s (arrived at 100, still waiting at 400), 5 min:
  // 1-minute bins would be 6 (> 4), so 2-minute bins: 0, 2, 4 min.
  CHECK(p["unit"] == "min");
  CHECK(p["bin_seconds"] == 120.0);
  CHECK(p["labels"] == Json::array({"0", "2", "4"}));
  CHECK(p["waited"] == Json::array({1, 1, 0}));              // 50 s, 150 s
  CHECK(p["still_waiting_bins"] == Json::array({1, 0, 1}));  // 100 s, 300 s
  CHECK(d["not_placed"]["reasons"] == Json::array({"WaitingInQueue", "CardInsufficientMemory"}));
  CHECK(d["not_placed"]["refused"] == Json::array({0, 1}));
  CHECK(d["not_placed"]["still_pending"] == Json::array({2, 0}));
}

TEST_CASE("report: histogram labels are exact and distinct, the longest wait inside the last bin") {
  auto waits_of = [](std::initializer_list<double> waits) {
    RunResult run;
    run.timeline = {at(0), at(1e6)};
    for (double w : waits) {
      PodRecord p;
      p.arrival = 0;
      p.start = w;
      p.status = "completed";
      run.pods.push_back(p);
    }
    return page_data(render_report_html(run))["pending"];
  };
  // One pod waited 3 h (the bundled example's fine-tune): half-hour bins.
  const Json one = waits_of({10800});
  CHECK(one["unit"] == "h");
  CHECK(one["labels"] == Json::array({"0.0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0"}));
  CHECK(one["waited"].back() == 1);
  // Many waits up to 1.9 h: at most 40 bins, each label once.
  std::initializer_list<double> many = {60,   600,  1200, 1800, 2400, 3000, 3600, 4200, 4800, 5400,
                                        6000, 6200, 6400, 6600, 6700, 6800, 6840, 6800, 6000, 5000};
  const Json m = waits_of(many);
  CHECK(m["unit"] == "min");
  CHECK(m["labels"].size() <= 40);
  std::set<std::string> distinct;
  for (const auto& l : m["labels"]) distinct.insert(l.get<std::string>());
  CHECK(distinct.size() == m["labels"].size());
  size_t binned = 0;
  for (const auto& n : m["waited"]) binned += n.get<size_t>();
  CHECK(binned == many.size());
}

TEST_CASE("report: the summary is grouped, in units, without empty or internal rows") {
  RunResult run;
  run.summary = {{"scenario", "s"},
                 {"policy", "fgd"},
                 {"seed", 42},
                 {"nodes", 4},
                 {"gpus", 10},
                 {"pods", 1234567},
                 {"placements", 1234000},
                 {"failed", 567},
                 {"refused", 567},
                 {"pending_at_end", 0},
                 {"wall_seconds", 0.000529},
                 {"pods_per_second", 2.3e9},
                 {"simulated_seconds", 164160.0},
                 {"run_kind", "no-departures"},
                 {"typical_pod_shapes", 9},
                 {"final_alloc_gpu_pct", 12.346},
                 {"final_frag_gpu_pct", 4.7},
                 {"alloc_ratio_at_130_pct", 95.27},
                 {"unallocated_gpus_at_130_pct", 360.92},
                 {"pending_seconds", {{"p50", 30.0}, {"p95", 10800.0}}},
                 {"refusals_by_reason", {{"CardInsufficientMemory", 567}}},
                 {"interrupted", false},
                 {"snapshot", {{"warnings", Json::array()}}},
                 {"future_key", nullptr}};
  const std::string html = render_report_html(run);
  const auto summary = html.substr(
      html.find("<section id=\"summary\">"),
      html.find("</section>", html.find("<section id=\"summary\">")) - html.find("<section id=\"summary\">"));
  CHECK(summary.find("<caption>Pods</caption>") != std::string::npos);
  CHECK(summary.find("<caption>Time pending</caption>") != std::string::npos);
  CHECK(summary.find("<th>Arrived</th><td>1,234,567</td>") != std::string::npos);
  CHECK(summary.find("<th>Refused</th><td>567 (0.05 %)</td>") != std::string::npos);
  CHECK(summary.find("<th>Fleet</th><td>4 nodes, 10 GPUs</td>") != std::string::npos);
  CHECK(summary.find("<th>Simulated time</th><td>45.6 h</td>") != std::string::npos);
  CHECK(summary.find("<th>Median</th><td>30 s</td>") != std::string::npos);
  CHECK(summary.find("<th>95th percentile</th><td>3.0 h</td>") != std::string::npos);
  CHECK(summary.find("<th>GPU (milli-GPU) at the end</th><td>12.35 %</td>") != std::string::npos);
  CHECK(summary.find("<th>GPU at 130 % arrived demand</th><td>95.27 %</td>") != std::string::npos);
  CHECK(summary.find("<td>360.9 GPUs</td>") != std::string::npos);
  CHECK(summary.find("4.70 % (for the run's 9 typical pod shapes)") != std::string::npos);
  CHECK(summary.find("567 × CardInsufficientMemory") != std::string::npos);
  CHECK(summary.find("title=\"summary.json: pending_seconds.p95\"") != std::string::npos);
  // Nothing internal or empty: no wall time, no raw key as a label, no empty list, no unknown key.
  for (const char* absent : {"Wall", "Pods per second", "wall_seconds</", "a list of", "Warning", "future",
                             "p99", "Interrupted", "<caption>Cluster snapshot</caption>"})
    CHECK(summary.find(absent) == std::string::npos);
}

TEST_CASE("report: a run read back from its files draws the same data") {
  const auto dir = std::filesystem::temp_directory_path() / "gpuslice-html-report-test";
  std::filesystem::remove_all(dir);
  RunResult run;
  run.summary = {{"scenario", "s"}, {"policy", "hami-binpack"}};
  run.node_names = {"a", "b"};
  TimelineRow t0 = at(0), t1 = at(10);
  t1.running = 1;
  t1.alloc_gpu_pct = 25;
  run.timeline = {t0, t1};
  PodRecord p;
  p.name = "ns/p,1";  // a comma: quoted in pods.csv
  p.arrival = 0;
  p.start = 5;
  p.status = "running";
  p.node = "b";
  run.pods = {p};
  run.card_use = {use(5, 1, 0, 250)};
  write_outputs(run, dir.string());
  REQUIRE(std::filesystem::exists(dir / "report.html"));
  const RunResult back = read_run_folder(dir.string());
  CHECK(back.pods.at(0).name == "ns/p,1");
  CHECK(back.card_use.at(0).card_memory_mib == 1000);
  const Json a = page_data(render_report_html(run)), b = page_data(render_report_html(back));
  CHECK(a["timeline"] == b["timeline"]);
  CHECK(a["pending"] == b["pending"]);
  CHECK(a["heatmap"]["values"] == b["heatmap"]["values"]);
  CHECK(a["heatmap"]["row_labels"] == b["heatmap"]["row_labels"]);

  // A full row (pods.csv has 14 columns) whose arrival is not a number.
  std::ofstream(dir / "pods.csv", std::ios::app) << "x,,0,later,,,,pending,,,,later,,\n";
  try {
    read_run_folder(dir.string());
    FAIL("a bad arrival was accepted");
  } catch (const core::InputError& e) {
    CHECK(e.file() == (dir / "pods.csv").string());
    CHECK(e.line() == 3);
    CHECK(e.field() == "arrival");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("timeline.csv keeps its documented columns and reads back every one", "[report][timeline]") {
  // The header users and docs/simulator.md rely on, spelled out here rather
  // than taken from the column table the writer uses.
  const std::string header =
      "time,running,pending,placed,failed,arrived_gpu_pct,alloc_gpu_pct,alloc_memory_pct,alloc_cores_pct,"
      "busy_cards_pct,frag_gpu_pct,nodes";
  const auto dir = std::filesystem::temp_directory_path() / "gpuslice-timeline-columns";
  std::filesystem::remove_all(dir);
  RunResult run;
  run.summary = {{"scenario", "s"}, {"policy", "hami-binpack"}};
  TimelineRow r;
  r.time = 12.5;
  r.running = 3;
  r.pending = 4;
  r.placed = 5;
  r.failed = 6;
  r.arrived_pct = 70.25;
  r.alloc_gpu_pct = 60.5;
  r.alloc_memory_pct = 50.125;
  r.alloc_cores_pct = 40.0625;
  r.busy_cards_pct = 30.5;
  r.frag_gpu_pct = 20.25;
  r.nodes = 7;
  run.timeline = {r};
  write_outputs(run, dir.string());
  std::ifstream in(dir / "timeline.csv");
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  CHECK(first == header);
  CHECK(second == "12.500,3,4,5,6,70.2500,60.5000,50.1250,40.0625,30.5000,20.2500,7");
  const RunResult back = read_run_folder(dir.string());
  REQUIRE(back.timeline.size() == 1);
  const TimelineRow& b = back.timeline[0];
  CHECK(b.time == 12.5);
  CHECK(b.running == 3);
  CHECK(b.pending == 4);
  CHECK(b.placed == 5);
  CHECK(b.failed == 6);
  CHECK(b.arrived_pct == 70.25);
  CHECK(b.alloc_gpu_pct == 60.5);
  CHECK(b.alloc_memory_pct == 50.125);
  CHECK(b.alloc_cores_pct == 40.0625);
  CHECK(b.busy_cards_pct == 30.5);
  CHECK(b.frag_gpu_pct == 20.25);
  CHECK(b.nodes == 7);
  std::filesystem::remove_all(dir);
}

TEST_CASE("events.jsonl writes each event as one JSON line, escaped", "[report][events]") {
  const auto dir = std::filesystem::temp_directory_path() / "gpuslice-events-lines";
  std::filesystem::remove_all(dir);
  RunResult run;
  run.summary = {{"scenario", "s"}, {"policy", "hami-binpack"}};
  run.events = {
      EventRecord{7822, "ns/p", "Warning", "FilteringFailed", "3 nodes CardInsufficientMemory", "", ""},
      EventRecord{0.25, "v", "Normal", "Preempted", "by \"a\\b\"", "ns/hi", ""},
      EventRecord{1e21, "", "Normal", "ScaleDown", "tab\there, caf\xc3\xa9", "", "node-1"},
      EventRecord{2, "bad\xff", "Normal", "Ctl", std::string("nul\x01", 4), "", ""},
  };
  write_outputs(run, dir.string());
  std::ifstream in(dir / "events.jsonl");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // Worked out by hand: doubles as shortest round trip with ".0" on whole
  // numbers, '"' and '\' escaped, \t and U+0001 as JSON escapes, UTF-8 kept,
  // an invalid byte replaced by U+FFFD.
  REQUIRE(lines.size() == 4);
  CHECK(
      lines[0] ==
      R"({"time":7822.0,"pod":"ns/p","type":"Warning","reason":"FilteringFailed","message":"3 nodes CardInsufficientMemory"})");
  CHECK(
      lines[1] ==
      R"({"time":0.25,"pod":"v","type":"Normal","reason":"Preempted","message":"by \"a\\b\"","related":"ns/hi"})");
  CHECK(lines[2] ==
        "{\"time\":1e+21,\"pod\":\"\",\"type\":\"Normal\",\"reason\":\"ScaleDown\",\"message\":\"tab\\there, "
        "caf\xc3\xa9\",\"node\":\"node-1\"}");
  CHECK(lines[3] ==
        "{\"time\":2.0,\"pod\":\"bad\xef\xbf\xbd\",\"type\":\"Normal\",\"reason\":\"Ctl\",\"message\":"
        "\"nul\\u0001\"}");
  std::filesystem::remove_all(dir);
}

// report.html's reductions, read from the JSON the page embeds: bounded
// sizes on a large run, the heatmap's time-weighted means and the pending
// histogram on hand-made runs with known answers; and the run read back
// from its files draws the same page.
#include "gpuslice/sim/html_report.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

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

TEST_CASE("report: pending times are binned, pods still waiting apart") {
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
              pod(100, -1, "pending"), pod(300, -1, "pending"), pod(0, -1, "refused")};
  run.pods[5].reason = "CardInsufficientMemory";
  run.pods[3].reason = run.pods[4].reason = "WaitingInQueue";
  const Json d = page_data(render_report_html(run, limits));
  const Json& p = d["pending"];
  CHECK(p["placed_at_once"] == 1);
  CHECK(p["placed_after_waiting"] == 2);
  CHECK(p["still_waiting"] == 2);
  // The longest wait is 300 s (arrived at 100, still waiting at 400): bins of 75 s.
  CHECK(p["bin_seconds"] == 75.0);
  CHECK(p["waited"] == Json::array({1, 0, 1, 0}));
  CHECK(p["still_waiting_bins"] == Json::array({0, 1, 0, 1}));
  CHECK(d["not_placed"]["reasons"] == Json::array({"WaitingInQueue", "CardInsufficientMemory"}));
  CHECK(d["not_placed"]["refused"] == Json::array({0, 1}));
  CHECK(d["not_placed"]["still_pending"] == Json::array({2, 0}));
}

TEST_CASE("report: the summary table shows every key with its unit") {
  RunResult run;
  run.summary = {{"pods", 1234567},
                 {"final_alloc_gpu_pct", 12.346},
                 {"simulated_seconds", 164160.0},
                 {"alloc_ratio_at_130_pct", 95.27},
                 {"unallocated_gpus_at_130_pct", 360.92},
                 {"pending_seconds", {{"p50", 30.0}}},
                 {"refusals_by_reason", Json::object()},
                 {"interrupted", false},
                 {"alloc_gpu_pct_time_weighted", 54.75},
                 {"future_key", nullptr}};
  const std::string html = render_report_html(run);
  CHECK(html.find("<th>Pods<code>pods</code></th><td>1,234,567</td>") != std::string::npos);
  CHECK(html.find("<td>12.35 %</td>") != std::string::npos);
  CHECK(html.find("<td>45.6 h (164,160 s)</td>") != std::string::npos);
  CHECK(html.find("Alloc ratio at 130 % arrived<code>alloc_ratio_at_130_pct</code></th><td>95.27 %") !=
        std::string::npos);
  CHECK(html.find("<code>unallocated_gpus_at_130_pct</code></th><td>360.9</td>") != std::string::npos);
  CHECK(html.find("<th>P50<code>p50</code></th><td>30 s</td>") != std::string::npos);
  CHECK(
      html.find("<th>Alloc GPU time weighted<code>alloc_gpu_pct_time_weighted</code></th><td>54.75 %</td>") !=
      std::string::npos);
  CHECK(html.find("<th>Future key<code>future_key</code></th><td><span class=\"na\">n/a</span>") !=
        std::string::npos);
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
      "busy_cards_pct,frag_gpu_pct";
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
  run.timeline = {r};
  write_outputs(run, dir.string());
  std::ifstream in(dir / "timeline.csv");
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  CHECK(first == header);
  CHECK(second == "12.500,3,4,5,6,70.2500,60.5000,50.1250,40.0625,30.5000,20.2500");
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
  std::filesystem::remove_all(dir);
}

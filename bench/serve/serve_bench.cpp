// Load on `gpuslice serve` over loopback, bounded in count and time: filter
// latency (p50/p99) and requests/s with kube-scheduler's nodeCacheCapable
// payload (every node named), then filter+bind pairs/s, then filters for a
// pod that fits no node (90,000 MiB on one card: FailedNodes names every
// node), again with a small pod filtered and bound before each (so a node
// changed since the last refusal, whose answer the server keeps), then
// Cluster Autoscaler's dry-run filter: `Nodes` holding 10 template nodes
// the cluster does not know (8 A100 cards each, as Node objects with their
// registration) for a pod that fits them all. Fleets: openb's 1,213 GPU
// nodes (the simulator's reader) and 10,000 generated 8-card nodes.
//   serve_bench [--requests N] [--seconds S] [--clients C] [--fleet openb|generated|both] [--stages]
//               [--refusals-afresh] [--quota-namespaces N]
// --quota-namespaces N: the pods spread over N namespaces, each with a
// ResourceQuota (limits.nvidia.com/gpumem and gpucores) too large to refuse
// them: the quota book's cost on every filter, bind and refusal.
// --stages also times the refused filter's decode, decision and answer in
// this process, without HTTP: with the last refusal's answer kept, and built
// afresh every time. --refusals-afresh serves with every refusal built
// afresh (StateOptions::reuse_refusals off): the server as it was before.
#include <fmt/format.h>
#include <httplib.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>

#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/serve/memory_cluster.hpp"
#include "gpuslice/serve/server.hpp"
#include "gpuslice/sim/openb.hpp"

using namespace gpuslice;
using Clock = std::chrono::steady_clock;

namespace {

int quota_namespaces = 0;  // --quota-namespaces

// The namespace of the bench's pod `id`.
std::string ns_of(int id) {
  return quota_namespaces > 0 ? fmt::format("team-{}", id % quota_namespaces) : "bench";
}

nlohmann::json node_object(const core::Node& n) {
  return {{"metadata",
           {{"name", n.name},
            {"annotations",
             {{std::string(core::codec::kRegisterAnnotation),
               core::codec::encode_registration_json(n.devices)}}}}},
          {"status",
           {{"allocatable",
             {{"cpu", fmt::format("{}m", n.capacity.cpu_milli)},
              {"memory", fmt::format("{}Mi", n.capacity.memory_mib)}}}}}};
}

std::vector<nlohmann::json> openb_nodes() {
  const std::string path = std::string(GPUSLICE_OPENB_DIR) + "/openb_node_list_gpu_node.csv";
  const core::Cluster fleet = sim::load_openb_nodes(core::codec::read_text_file(path), path, 10);
  std::vector<nlohmann::json> out;
  for (size_t i = 0; i < fleet.size(); ++i) out.push_back(node_object(fleet.node(i)));
  return out;
}

std::vector<nlohmann::json> generated_nodes(int count, const std::string& name_format = "node-{:05d}") {
  std::vector<nlohmann::json> out;
  for (int i = 0; i < count; ++i) {
    core::Node n;
    n.name = fmt::vformat(name_format, fmt::make_format_args(i));
    n.capacity = {128000, 1048576};
    for (int c = 0; c < 8; ++c)
      n.devices.push_back(
          core::healthy_card(fmt::format("GPU-{:05d}-{}", i, c), c, "NVIDIA-A100-SXM4-80GB", 10, 81920));
    out.push_back(node_object(n));
  }
  return out;
}

struct Figures {
  std::vector<double> latencies_ms;
  double seconds = 0;
  int errors = 0;
};

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// UnschedulableAfterBind: as Unschedulable, each refusal after a small pod
// is filtered and bound (not timed), so a node has changed since the last
// refusal, as in a busy cluster.
// DryRun: Cluster Autoscaler's filter, `names_json` then being the
// request's `Nodes` (a NodeList of template nodes).
enum class Mode { Filter, FilterBind, Unschedulable, UnschedulableAfterBind, DryRun };

// `clients` threads, each its own keep-alive connection, until `requests`
// are done or `seconds` pass.
Figures drive(int port, int clients, int requests, double seconds, const std::string& names_json, Mode mode,
              std::atomic<int>& next_pod) {
  const bool bind = mode == Mode::FilterBind;
  const bool refused = mode == Mode::Unschedulable || mode == Mode::UnschedulableAfterBind;
  const char* gpumem = refused ? "90000" : "2000";
  const bool dry_run = mode == Mode::DryRun;
  const size_t named = dry_run
                           ? nlohmann::json::parse(names_json)["items"].size()
                           : static_cast<size_t>(std::count(names_json.begin(), names_json.end(), ',')) + 1;
  Figures f;
  std::mutex m;
  std::atomic<int> issued{0};
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&] {
      pthread_setname_np(pthread_self(), "bench-client");  // perf --sort comm tells client from server
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);  // as Go's net/http does
      client.set_read_timeout(30, 0);
      std::vector<double> mine;
      int errors = 0;
      // Filters and binds a 2000 MiB pod: true when it was bound.
      auto place_small = [&](httplib::Client& with) {
        const int id = next_pod++;
        auto res = with.Post(
            "/filter",
            fmt::format(
                R"({{"Pod":{{"metadata":{{"name":"s{}","namespace":"{}","uid":"s{}"}},"spec":{{"containers":[{{"name":"m","resources":{{"limits":{{"nvidia.com/gpu":"1","nvidia.com/gpumem":"2000","nvidia.com/gpucores":"5"}}}}}}]}}}},"NodeNames":{}}})",
                id, ns_of(id), id, names_json),
            "application/json");
        if (!res || res->status != 200) return false;
        auto j = nlohmann::json::parse(res->body);
        if (!j["NodeNames"].is_array() || j["NodeNames"].empty()) return false;
        const std::string node = j["NodeNames"][0];
        auto b =
            with.Post("/bind",
                      fmt::format(R"({{"PodName":"s{}","PodNamespace":"{}","PodUID":"s{}","Node":"{}"}})", id,
                                  ns_of(id), id, node),
                      "application/json");
        return b && b->status == 200 && nlohmann::json::parse(b->body)["Error"] == "";
      };
      while (issued++ < requests && Clock::now() < deadline) {
        if (mode == Mode::UnschedulableAfterBind && !place_small(client)) {
          ++errors;
          continue;
        }
        const int id = next_pod++;
        const std::string pod = fmt::format("p{}", id);
        const std::string body = fmt::format(
            R"({{"Pod":{{"metadata":{{"name":"{}","namespace":"{}","uid":"u{}"}},"spec":{{"containers":[{{"name":"m","resources":{{"limits":{{"nvidia.com/gpu":"1","nvidia.com/gpumem":"{}","nvidia.com/gpucores":"5"}}}}}}]}}}},"{}":{}}})",
            pod, ns_of(id), id, gpumem, dry_run ? "Nodes" : "NodeNames", names_json);
        // The latency is the server's: from sending the request until its
        // answer is in, not the client's reading of it (the answer to a pod
        // that fits none of 10,000 nodes is 420 kB of JSON).
        const auto t0 = Clock::now();
        auto res = client.Post("/filter", body, "application/json");
        double latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        std::string node;
        bool answered = false;
        if (res && res->status == 200) {
          auto j = nlohmann::json::parse(res->body);
          if (j["NodeNames"].is_array() && !j["NodeNames"].empty()) node = j["NodeNames"][0];
          // Unschedulable: every named node has its reason. A dry run: every template fits.
          if (dry_run)
            answered = j["Nodes"].is_object() && j["Nodes"]["items"].size() == named;
          else
            answered =
                refused ? j["FailedNodes"].is_object() && j["FailedNodes"].size() == named : !node.empty();
        }
        if (!answered) {
          if (errors == 0) {
            std::lock_guard lock(m);
            fmt::print(stderr, "first failed filter: {}\n",
                       res ? fmt::format("{} {}", res->status, res->body.substr(0, 300))
                           : httplib::to_string(res.error()));
          }
          ++errors;
          continue;
        }
        if (bind) {
          const auto b0 = Clock::now();
          auto b = client.Post(
              "/bind",
              fmt::format(R"({{"PodName":"{}","PodNamespace":"bench","PodUID":"u{}","Node":"{}"}})", pod, id,
                          node),
              "application/json");
          latency_ms += std::chrono::duration<double, std::milli>(Clock::now() - b0).count();
          if (!b || b->status != 200 || nlohmann::json::parse(b->body)["Error"] != "") ++errors;
        }
        mine.push_back(latency_ms);
      }
      std::lock_guard lock(m);
      f.latencies_ms.insert(f.latencies_ms.end(), mine.begin(), mine.end());
      f.errors += errors;
    });
  for (auto& t : threads) t.join();
  f.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return f;
}

// One filter in this process without HTTP, its stages timed (ms): decode,
// the decision, the answer.
struct FilterStages {
  double decode = 0, decide = 0, encode = 0, whole = 0;
  size_t bytes = 0;
};
FilterStages time_filter(serve::DecisionState& state, const std::string& body) {
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  const auto t0 = Clock::now();
  serve::ExtenderArgs args = serve::decode_extender_args(body);
  const auto t1 = Clock::now();
  const serve::ExtenderFilterResult result = state.filter(args, nullptr);
  const auto t2 = Clock::now();
  const std::string answer = serve::encode_filter_result(result, args);
  const auto t3 = Clock::now();
  return {ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t0, t3), answer.size()};
}

// The refused filter's own stages, in this process without HTTP (medians of
// 300): what the server spends between reading the request and writing the
// answer, and so what is left to the HTTP exchange in the latency above.
void print_stages(serve::DecisionState& state, const std::string& names_json, const char* which) {
  const std::string body = fmt::format(
      R"({{"Pod":{{"metadata":{{"name":"s","namespace":"bench","uid":"us"}},"spec":{{"containers":[{{"name":"m","resources":{{"limits":{{"nvidia.com/gpu":"1","nvidia.com/gpumem":"90000","nvidia.com/gpucores":"5"}}}}}}]}}}},"NodeNames":{}}})",
      names_json);
  std::vector<double> decode, decide, encode, whole;
  size_t bytes = 0;
  for (int i = 0; i < 300; ++i) {
    const FilterStages f = time_filter(state, body);
    bytes = f.bytes;
    decode.push_back(f.decode);
    decide.push_back(f.decide);
    encode.push_back(f.encode);
    whole.push_back(f.whole);
  }
  fmt::print(
      "  refused filter's stages in process, {} (median of 300): decode {:.3f} ms, decide {:.3f} ms, encode "
      "{:.3f} ms ({:.0f} kB), all three {:.3f} ms\n",
      which, percentile(decode, 0.5), percentile(decide, 0.5), percentile(encode, 0.5),
      static_cast<double>(bytes) / 1000.0, percentile(whole, 0.5));
}

// This thread's CPU time in ms: a request's cost without the time another
// process held the core (the p99 of wall time on a shared machine is mostly
// that).
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Cluster Autoscaler's dry run in this process without HTTP: decode, the
// decision and the answer, 3,000 times (median and p99, wall and CPU time).
void print_dry_run_stages(serve::DecisionState& state, const std::string& templates_json) {
  std::vector<double> decode, decide, encode, whole, cpu;
  for (int i = 0; i < 3000; ++i) {
    const std::string body = fmt::format(
        R"({{"Pod":{{"metadata":{{"name":"d{}","namespace":"bench","uid":"ud{}"}},"spec":{{"containers":[{{"name":"m","resources":{{"limits":{{"nvidia.com/gpu":"1","nvidia.com/gpumem":"2000","nvidia.com/gpucores":"5"}}}}}}]}}}},"Nodes":{}}})",
        i, i, templates_json);
    const double c0 = thread_cpu_ms();
    const FilterStages f = time_filter(state, body);
    cpu.push_back(thread_cpu_ms() - c0);
    decode.push_back(f.decode);
    decide.push_back(f.decide);
    encode.push_back(f.encode);
    whole.push_back(f.whole);
  }
  fmt::print(
      "  CA dry run in process (3,000): decode {:.3f} ms, decide {:.3f} ms, encode {:.3f} ms (medians); all "
      "three "
      "p50 {:.3f} ms, p99 {:.3f} ms wall; p50 {:.3f} ms, p99 {:.3f} ms CPU\n",
      percentile(decode, 0.5), percentile(decide, 0.5), percentile(encode, 0.5), percentile(whole, 0.5),
      percentile(whole, 0.99), percentile(cpu, 0.5), percentile(cpu, 0.99));
}

void run(const char* fleet_name, std::vector<nlohmann::json> nodes, int requests, double seconds, int clients,
         bool stages, bool refusals_afresh) {
  serve::MemoryWriter writer;
  serve::StateOptions so;
  so.release_lock_after_bind = true;
  so.reuse_refusals = !refusals_afresh;
  serve::DecisionState state(so, writer);
  serve::Metrics metrics;
  serve::ServerOptions o;
  o.listen = {"127.0.0.1", 0};
  o.metrics_listen = {"127.0.0.1", 0};
  serve::Server server(state, metrics, o);
  if (quota_namespaces > 0) {
    std::vector<core::NamespaceQuota> quotas;
    for (int i = 0; i < quota_namespaces; ++i)
      quotas.push_back({fmt::format("team-{}", i), "gpu", {int64_t{1} << 40, int64_t{1} << 30}, 0});
    state.quotas_replaced(std::move(quotas));
  }
  const auto t0 = Clock::now();
  state.replace_all(nodes, {});
  const double load_s = std::chrono::duration<double>(Clock::now() - t0).count();
  server.start();
  nlohmann::json names = nlohmann::json::array();
  for (const auto& n : nodes) names.push_back(n["metadata"]["name"]);
  const std::string names_json = names.dump();
  std::atomic<int> next_pod{0};
  drive(server.port(), 1, 20, seconds, names_json, Mode::Filter, next_pod);  // warm-up
  Figures filter = drive(server.port(), clients, requests, seconds, names_json, Mode::Filter, next_pod);
  Figures pairs = drive(server.port(), clients, requests, seconds, names_json, Mode::FilterBind, next_pod);
  const uint64_t kept_before = state.refusals_reused_count();
  Figures refused =
      drive(server.port(), clients, requests, seconds, names_json, Mode::Unschedulable, next_pod);
  const uint64_t kept_unchanged = state.refusals_reused_count() - kept_before;
  Figures refused_after_bind =
      drive(server.port(), clients, requests, seconds, names_json, Mode::UnschedulableAfterBind, next_pod);
  const uint64_t kept_after_bind = state.refusals_reused_count() - kept_before - kept_unchanged;
  const size_t nf = filter.latencies_ms.size(), np = pairs.latencies_ms.size(),
               nr = refused.latencies_ms.size();
  fmt::print("{}: {} nodes (cluster read in {:.2f} s), request {:.0f} kB, {} clients{}\n", fleet_name,
             nodes.size(), load_s, static_cast<double>(names_json.size()) / 1000.0, clients,
             refusals_afresh ? ", every refusal built afresh" : "");
  fmt::print("  filter: {} requests in {:.2f} s = {:.0f} req/s, p50 {:.3f} ms, p99 {:.3f} ms, errors {}\n",
             nf, filter.seconds, static_cast<double>(nf) / filter.seconds,
             percentile(filter.latencies_ms, 0.50), percentile(filter.latencies_ms, 0.99), filter.errors);
  fmt::print(
      "  filter+bind: {} pairs in {:.2f} s = {:.0f} pairs/s, p50 {:.3f} ms, p99 {:.3f} ms, errors {}\n", np,
      pairs.seconds, static_cast<double>(np) / pairs.seconds, percentile(pairs.latencies_ms, 0.50),
      percentile(pairs.latencies_ms, 0.99), pairs.errors);
  fmt::print(
      "  fits no node: {} requests in {:.2f} s = {:.0f} req/s, p50 {:.3f} ms, p99 {:.3f} ms, errors {}, {} "
      "answered as kept\n",
      nr, refused.seconds, static_cast<double>(nr) / refused.seconds, percentile(refused.latencies_ms, 0.50),
      percentile(refused.latencies_ms, 0.99), refused.errors, kept_unchanged);
  const size_t nb = refused_after_bind.latencies_ms.size();
  fmt::print(
      "  fits no node, a pod bound before each: {} requests, p50 {:.3f} ms, p99 {:.3f} ms, errors {}, {} "
      "answered as kept\n",
      nb, percentile(refused_after_bind.latencies_ms, 0.50),
      percentile(refused_after_bind.latencies_ms, 0.99), refused_after_bind.errors, kept_after_bind);
  // Cluster Autoscaler's dry run: 10 template nodes, one per node group.
  const std::string templates_json =
      nlohmann::json{{"items", generated_nodes(10, "template-node-for-pool-{}-5577006791947779410-e-0")}}
          .dump();
  const uint64_t reservations_before = state.reservation_count();
  Figures dry = drive(server.port(), clients, requests, seconds, templates_json, Mode::DryRun, next_pod);
  const size_t nd = dry.latencies_ms.size();
  fmt::print(
      "  CA dry run (10 template nodes in Nodes): {} requests in {:.2f} s = {:.0f} req/s, p50 {:.3f} ms, p99 "
      "{:.3f} ms, errors {}, reservations made {}\n",
      nd, dry.seconds, static_cast<double>(nd) / dry.seconds, percentile(dry.latencies_ms, 0.50),
      percentile(dry.latencies_ms, 0.99), dry.errors,
      static_cast<long long>(state.reservation_count()) - static_cast<long long>(reservations_before));
  server.stop();
  print_dry_run_stages(state, templates_json);
  if (stages) {
    print_stages(state, names_json, "the last refusal's answer kept");
    so.reuse_refusals = false;
    serve::DecisionState afresh(so, writer);
    afresh.replace_all(nodes, {});
    print_stages(afresh, names_json, "every refusal built afresh");
  }
}

}  // namespace

int main(int argc, char** argv) {
  int requests = 2000, clients = 2;
  double seconds = 10;
  std::string fleet = "both";
  bool stages = false, refusals_afresh = false;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--stages"))
      stages = true;
    else if (!std::strcmp(argv[i], "--refusals-afresh"))
      refusals_afresh = true;
    else if (has_value && !std::strcmp(argv[i], "--requests"))
      requests = std::atoi(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--clients"))
      clients = std::atoi(argv[++i]);
    else if (has_value && !std::strcmp(argv[i], "--fleet"))
      fleet = argv[++i];
    else if (has_value && !std::strcmp(argv[i], "--quota-namespaces"))
      quota_namespaces = std::atoi(argv[++i]);
    else {
      fmt::print(stderr,
                 "serve_bench: unknown option {} (--requests N, --seconds S, --clients C, --fleet "
                 "openb|generated|both, --stages, --refusals-afresh, --quota-namespaces N)\n",
                 argv[i]);
      return 2;
    }
  }
  if (fleet == "openb" || fleet == "both")
    run("openb", openb_nodes(), requests, seconds, clients, stages, refusals_afresh);
  if (fleet == "generated" || fleet == "both")
    run("generated", generated_nodes(10000), requests, seconds, clients, stages, refusals_afresh);
}

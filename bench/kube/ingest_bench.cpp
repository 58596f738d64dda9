// Getting a real cluster in: whole-process figures for every front end that
// reads a kubectl dump, each beside Python reading the same file in the same
// run (figures for docs/simulator.md and docs/serve.md, not a test):
//
//   ingest_bench [--nodes 4000] [--dir DIR] [--gpuslice PATH] [--python PYTHON]
//                [--filters 200] [--skip-pyyaml] [--only json|yaml|serve|feed]
//
// Generates the dump (kube_dump.hpp) in DIR (default /tmp/gpuslice-ingest),
// then runs, each as its own process (wall time and peak RSS from wait4):
//   Python json.load / PyYAML's C loader (yaml.CSafeLoader) of the file,
//   gpuslice simulate --snapshot (JSON and YAML),
//   gpuslice serve --snapshot: time until /readyz answers 200 and the
//     resident memory then; /filter for a pod that fits no node, naming every
//     node (p50 / p99 over --filters requests),
//   gpuslice serve --kubeconfig against the API double holding the same
//     cluster: the feed's first list (41k pods at 4,000 nodes, pages of 500)
//     until /readyz answers 200, and the resident memory then.
// --gpuslice runs another build (the figures before a change).
#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "api_double.hpp"
#include "child_process.hpp"
#include "kube_dump.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int nodes = 4000;
  std::string dir = "/tmp/gpuslice-ingest";
  std::string gpuslice = GPUSLICE_BINARY;
  std::string python = "python3";
  int filters = 200;
  bool pyyaml = true;
  std::string only;
};

struct ProcessFigures : gpuslice::bench::ChildFigures {
  std::string output;  // stdout (Python prints its own load time)
};

double mib(long kib) { return static_cast<double>(kib) / 1024.0; }

using gpuslice::bench::spawn;  // the child's stderr goes to a file, to be shown when it fails

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ProcessFigures run(const std::vector<std::string>& argv, const Options& o) {
  const std::string out = o.dir + "/child.out";
  // Braced: the child has run before its output is read.
  return ProcessFigures{{gpuslice::bench::run_child(argv, out, o.dir + "/child.err")}, slurp(out)};
}

// VmRSS and VmHWM of a running process, MiB.
std::pair<double, double> resident(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  double rss = 0, hwm = 0;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) rss = mib(std::stol(line.substr(6)));
    if (line.rfind("VmHWM:", 0) == 0) hwm = mib(std::stol(line.substr(6)));
  }
  return {rss, hwm};
}

// User + system seconds a running process has used so far.
double cpu_seconds(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // after "pid (comm) "
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i)
    if (i == 14 || i == 15) ticks += std::stod(f);  // utime, stime
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// Two loopback ports free now (held together, so they differ, then closed:
// an httplib::Server bound but never listening keeps its socket open).
std::pair<int, int> free_ports() {
  auto bind_any = [](int& port) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("cannot find a free loopback port");
    port = ntohs(addr.sin_port);
    return fd;
  };
  int pa = 0, pb = 0;
  const int a = bind_any(pa), b = bind_any(pb);
  close(a);
  close(b);
  return {pa, pb};
}

struct ServeFigures {
  double ready_s = 0, cpu_s = 0, rss_mib = 0, hwm_mib = 0;
  std::vector<double> filter_ms;
  std::string first_answer;
  bool ready = false;
};

// Starts `gpuslice serve` with `source_args`, waits for /readyz, measures,
// then sends unschedulable filters naming `names` (when given).
ServeFigures serve(const Options& o, const std::vector<std::string>& source_args,
                   const std::string& names_json, int filters) {
  const auto [port, metrics_port] = free_ports();
  std::vector<std::string> argv{o.gpuslice, "serve"};
  argv.insert(argv.end(), source_args.begin(), source_args.end());
  for (const std::string& a : {std::string("--listen"), fmt::format("127.0.0.1:{}", port),
                               std::string("--metrics-listen"), fmt::format("127.0.0.1:{}", metrics_port)})
    argv.push_back(a);
  ServeFigures f;
  const auto t0 = Clock::now();
  const pid_t pid = spawn(argv, "", o.dir + "/child.err");
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(0, 200000);
  client.set_read_timeout(60, 0);
  while (Clock::now() - t0 < std::chrono::minutes(10)) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return f;  // it exited: not ready
    if (auto res = client.Get("/readyz"); res && res->status == 200) {
      f.ready = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  f.ready_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::tie(f.rss_mib, f.hwm_mib) = resident(pid);
  f.cpu_s = cpu_seconds(pid);
  client.set_keep_alive(true);
  for (int i = 0; f.ready && i < filters; ++i) {
    // 90,000 MiB on one card: more than any A100, H100 or L40S has.
    const std::string body = fmt::format(
        R"({{"Pod":{{"metadata":{{"name":"too-big-{0}","namespace":"bench","uid":"u-{0}"}},"spec":{{"containers":[{{"name":"m","resources":{{"limits":{{"nvidia.com/gpu":"1","nvidia.com/gpumem":"90000"}}}}}}]}}}},"NodeNames":{1}}})",
        i, names_json);
    const auto s = Clock::now();
    auto res = client.Post("/filter", body, "application/json");
    f.filter_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
    if (i == 0 && res) f.first_answer = res->body;
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  return f;
}

// Python's own reading of the file, timed inside the interpreter as well.
std::string python_load(bool yaml) {
  return yaml ? "import sys,time,yaml\nt=time.perf_counter()\nyaml.load(open(sys.argv[1],'rb'),Loader=yaml."
                "CSafeLoader)\nprint(time.perf_counter()-t)"
              : "import sys,time,json\nt=time.perf_counter()\njson.load(open(sys.argv[1],'rb'))\nprint(time."
                "perf_counter()-t)";
}

// Wall and CPU seconds, MB/s of wall, peak RSS, and the ratio of CPU seconds
// to the anchor's ("-" when the anchor was not run).
void print_row(const std::string& what, double mb, const ProcessFigures& f, const ProcessFigures& anchor) {
  const std::string ratio = anchor.cpu_s > 0 ? fmt::format("{:.2f}x", f.cpu_s / anchor.cpu_s) : "-";
  fmt::print("  {:<46} {:>7.2f} s {:>7.2f} s {:>7.1f} MB/s {:>7.0f} MiB {:>7}{}\n", what, f.wall_s, f.cpu_s,
             mb / f.wall_s, f.peak_mib, ratio, f.status == 0 ? "" : fmt::format("  (exit {})", f.status));
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (flag == "--nodes")
      o.nodes = std::stoi(value());
    else if (flag == "--dir")
      o.dir = value();
    else if (flag == "--gpuslice")
      o.gpuslice = value();
    else if (flag == "--python")
      o.python = value();
    else if (flag == "--filters")
      o.filters = std::stoi(value());
    else if (flag == "--skip-pyyaml")
      o.pyyaml = false;
    else if (flag == "--only")
      o.only = value();
    else {
      fmt::print(stderr, "ingest_bench: unknown flag {}\n", flag);
      return 2;
    }
  }
  fs::create_directories(o.dir);
  gpuslice::bench::DumpShape shape;
  shape.nodes = o.nodes;
  const std::string json_path = fmt::format("{}/dump-{}.json", o.dir, o.nodes);
  const std::string yaml_path = fmt::format("{}/dump-{}.yaml", o.dir, o.nodes);
  const std::string api_dir = fmt::format("{}/api-{}", o.dir, o.nodes);
  gpuslice::bench::DumpCounts counts;
  {
    std::FILE* f = std::fopen(json_path.c_str(), "wb");
    counts = gpuslice::bench::write_kubectl_json(shape, f);
    std::fclose(f);
    f = std::fopen(yaml_path.c_str(), "wb");
    gpuslice::bench::write_kubectl_yaml(shape, f);
    std::fclose(f);
    fs::create_directories(api_dir);
    gpuslice::bench::write_api_lists(shape, api_dir);
  }
  const double json_mb = static_cast<double>(fs::file_size(json_path)) / 1e6;
  const double yaml_mb = static_cast<double>(fs::file_size(yaml_path)) / 1e6;
  fmt::print(
      "dump: {} nodes, {} pods ({} GPU pods running, {} daemon, {} Pending); {:.1f} MB JSON, {:.1f} MB "
      "YAML\n",
      counts.nodes, counts.pods(), counts.gpu_pods, counts.daemon_pods, counts.pending_pods, json_mb,
      yaml_mb);
  fmt::print("gpuslice: {}\n", o.gpuslice);
  fmt::print("  {:<46} {:>9} {:>9} {:>12} {:>11} {:>7}\n", "", "wall", "cpu", "", "peak RSS", "cpu vs");

  const std::string out_dir = o.dir + "/run";
  ProcessFigures json_anchor;
  auto python = [&](const std::string& path, bool yaml) {
    ProcessFigures f = run({o.python, "-c", python_load(yaml), path}, o);
    return f;
  };
  if (o.only.empty() || o.only == "json" || o.only == "serve" || o.only == "feed") {
    json_anchor = python(json_path, false);
    print_row(fmt::format("python json.load (load alone {:.2f} s)",
                          std::stod(json_anchor.output.empty() ? "0" : json_anchor.output)),
              json_mb, json_anchor, json_anchor);
  }
  if (o.only.empty() || o.only == "json") {
    fs::remove_all(out_dir);
    print_row("gpuslice simulate --snapshot JSON", json_mb,
              run({o.gpuslice, "simulate", "--snapshot", json_path, "--out", out_dir}, o), json_anchor);
  }
  if (o.only.empty() || o.only == "yaml") {
    ProcessFigures yaml_anchor;  // cpu_s 0: not run
    if (o.pyyaml) {
      yaml_anchor = python(yaml_path, true);
      print_row(fmt::format("python yaml CSafeLoader (load alone {:.2f} s)",
                            std::stod(yaml_anchor.output.empty() ? "0" : yaml_anchor.output)),
                yaml_mb, yaml_anchor, yaml_anchor);
    }
    fs::remove_all(out_dir);
    print_row("gpuslice simulate --snapshot YAML", yaml_mb,
              run({o.gpuslice, "simulate", "--snapshot", yaml_path, "--out", out_dir}, o), yaml_anchor);
  }
  std::string names = "[";
  for (size_t i = 0; i < counts.nodes; ++i) {
    static const char* kKinds[] = {"a100", "h100", "l40s"};
    names += fmt::format("{}\"gpu-{}-{:05d}\"", i ? "," : "", kKinds[i % 3], i);
  }
  names += "]";
  if (o.only.empty() || o.only == "serve") {
    const ServeFigures s = serve(o, {"--snapshot", json_path}, names, o.filters);
    if (!s.ready) {
      fmt::print("  gpuslice serve --snapshot JSON: never ready: {}\n", slurp(o.dir + "/child.err"));
    } else {
      fmt::print(
          "  {:<46} {:>7.2f} s {:>7.2f} s {:>7.1f} MB/s {:>7.0f} MiB {:>6.2f}x (resident when ready; peak "
          "{:.0f} MiB)\n",
          "gpuslice serve --snapshot JSON: ready", s.ready_s, s.cpu_s, json_mb / s.ready_s, s.rss_mib,
          s.cpu_s / json_anchor.cpu_s, s.hwm_mib);
      fmt::print("  {:<44} p50 {:.3f} ms, p99 {:.3f} ms over {} requests naming {} nodes\n",
                 "  /filter, a pod that fits no node", percentile(s.filter_ms, 0.5),
                 percentile(s.filter_ms, 0.99), s.filter_ms.size(), counts.nodes);
      fmt::print("    first answer: {:.160}...\n", s.first_answer);
    }
  }
  if (o.only.empty() || o.only == "feed") {
    ProcessFigures py = python(api_dir + "/pods.json", false);
    const double pods_mb = static_cast<double>(fs::file_size(api_dir + "/pods.json")) / 1e6;
    print_row("python json.load of the PodList", pods_mb, py, py);
    gpuslice::serve::testing::ApiDouble api(api_dir);
    const std::string kubeconfig = o.dir + "/kubeconfig";
    std::ofstream(kubeconfig) << fmt::format(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: double\n  cluster: {{server: '{}'}}\n"
        "users:\n- name: bench\n  user: {{token: {}}}\ncontexts:\n- name: double\n  context: {{cluster: "
        "double, "
        "user: bench}}\ncurrent-context: double\n",
        api.server(), api.token());
    const ServeFigures s = serve(o, {"--kubeconfig", kubeconfig}, names, 0);
    if (!s.ready)
      fmt::print("  gpuslice serve --kubeconfig (API double): never ready: {}\n",
                 slurp(o.dir + "/child.err"));
    else
      fmt::print(
          "  {:<46} {:>7.2f} s {:>7.2f} s {:>12} {:>7.0f} MiB {:>6.2f}x (resident when ready; peak {:.0f} "
          "MiB)\n",
          fmt::format("serve feed: first list of {} pods", counts.pods()), s.ready_s, s.cpu_s, "", s.rss_mib,
          s.cpu_s / py.cpu_s, s.hwm_mib);
  }
  return 0;
}

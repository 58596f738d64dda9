#include "gpuslice/monitor/cli.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "gpuslice/cli/grammar.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/monitor/monitor.hpp"
#include "gpuslice/serve/server.hpp"

namespace gpuslice::monitor {

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

struct Flags {
  std::string hook_path = "/usr/local/vgpu";
  std::string node_name;
  std::string kubeconfig, pods;
  bool in_cluster = false, no_pods = false;
  std::string metrics_listen = ":9394";
  bool legacy_metrics = false;
  double feedback_period = 5;
  bool no_feedback = false, clean_stale = false, once = false;
  double stale_after = 300;
};

std::string default_node_name() {
  // HAMi's monitor reads NODE_NAME (the DaemonSet sets it from spec.nodeName).
  if (const char* n = std::getenv("NODE_NAME"); n && *n) return n;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

std::unique_ptr<PodSource> pod_source(const Flags& f, const std::string& node) {
  if (f.no_pods) return no_pods();
  if (!f.pods.empty()) return pods_from_file(f.pods);
  const serve::KubeConnection c =
      f.in_cluster ? serve::connection_in_cluster() : serve::connection_from_kubeconfig(f.kubeconfig);
  return pods_from_api(c, node);
}

void run(const Flags& f) {
  const int sources = !f.kubeconfig.empty() + f.in_cluster + !f.pods.empty() + f.no_pods;
  if (sources != 1)
    throw core::InputError("command line", 0, "--pods",
                           "give one of --kubeconfig FILE, --in-cluster, --pods CLUSTER.yaml or --no-pods");
  if (f.clean_stale && f.no_pods)
    throw core::InputError(
        "command line", 0, "--clean-stale",
        "needs the node's pods (--kubeconfig, --in-cluster or --pods) to tell a stale folder");
  MonitorOptions o;
  o.hook_path = f.hook_path;
  o.node_name = f.node_name.empty() ? default_node_name() : f.node_name;
  o.legacy_metrics = f.legacy_metrics;
  o.feedback_period = f.feedback_period;
  o.feedback = !f.no_feedback;
  o.clean_stale = f.clean_stale;
  o.stale_after = f.stale_after;
  const serve::Endpoint listen = serve::parse_endpoint(f.metrics_listen, "--metrics-listen");
  std::unique_ptr<PodSource> pods = pod_source(f, o.node_name);
  // After the flags and the pod source are read (their mistakes first):
  // a mistyped path would read as a node with no container: an empty
  // /metrics and exit 0. The DaemonSet mounts it DirectoryOrCreate, so on a
  // node it always exists (containers/ inside may not, until a pod runs).
  std::error_code ec;
  if (!std::filesystem::is_directory(f.hook_path, ec))
    throw core::InputError(
        "command line", 0, "--hook-path",
        fmt::format("'{}' is not a folder (HAMi's HOOK_PATH, the one holding containers/)", f.hook_path));
  Monitor monitor(o, std::move(pods), open_nvml());
  if (f.once) {
    monitor.tick();
    std::cout << monitor.metrics();
    return;
  }
  httplib::Server http;
  http.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(monitor.metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  http.Get("/healthz",
           [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  const int port = serve::bind_endpoint(http, listen, "--metrics-listen");
  std::thread server([&] { http.listen_after_bind(); });
  std::cerr << "gpuslice monitor: node " << o.node_name << ", hook path " << o.hook_path << ", "
            << "metrics on http://" << listen.host << ":" << port << "/metrics, "
            << (o.feedback ? "feedback every " + std::to_string(o.feedback_period) + " s" : "no feedback")
            << "\n";
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  auto next = std::chrono::steady_clock::now();
  while (!g_stop) {
    monitor.tick();
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(o.feedback_period));
    while (!g_stop && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  http.stop();
  server.join();
}

}  // namespace

void register_cli(CLI::App& app) {
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("monitor",
                                 "Node daemon beside the shim: HAMi's vGPUmonitor metrics and feedback from "
                                 "the containers' accounting files");
  cmd->add_option("--hook-path", f->hook_path,
                  "folder holding containers/<pod UID>_<container>/ (HAMi's HOOK_PATH)")
      ->capture_default_str();
  cmd->add_option("--node-name", f->node_name, "this node's name (default: $NODE_NAME, else the host name)");
  auto* kubeconfig =
      cmd->add_option("--kubeconfig", f->kubeconfig, "read the node's pods as this kubeconfig's context");
  auto* in_cluster =
      cmd->add_flag("--in-cluster", f->in_cluster, "read the node's pods with the pod's service account");
  auto* pods =
      cmd->add_option("--pods", f->pods, "read pods from a kubectl dump (nodes,pods -A -o yaml|json)");
  auto* none = cmd->add_flag("--no-pods", f->no_pods, "no pod source: name each container by its pod UID");
  kubeconfig->excludes(in_cluster)->excludes(pods)->excludes(none);
  in_cluster->excludes(pods)->excludes(none);
  pods->excludes(none);
  cmd->add_option("--metrics-listen", f->metrics_listen, "/metrics listener host:port")
      ->capture_default_str();
  cmd->add_flag("--legacy-metrics", f->legacy_metrics, "also emit HAMi's legacy metric names and labels");
  cmd->add_option("--feedback-period", f->feedback_period, "seconds between feedback passes (HAMi: 5)")
      ->check(cli::number(0.05, 3600.0))
      ->capture_default_str();
  cmd->add_flag("--no-feedback", f->no_feedback, "only read the files: no feedback, no writes");
  cmd->add_flag(
      "--clean-stale", f->clean_stale,
      "remove folders whose pod is gone, untouched for --stale-after seconds, that no live process holds");
  cmd->add_option("--stale-after", f->stale_after,
                  "seconds a gone pod's folder must be untouched (HAMi: 300)")
      ->check(cli::number(0.0, 1e7))
      ->capture_default_str();
  cmd->add_flag("--once", f->once, "one pass (feedback included), print /metrics to stdout and exit");
  cmd->callback([f] { run(*f); });
}

}  // namespace gpuslice::monitor

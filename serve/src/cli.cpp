#include "gpuslice/serve/cli.hpp"

#include <fmt/format.h>
#include <signal.h>

#include <iostream>
#include <memory>

#include "gpuslice/cli/grammar.hpp"
#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/dialects/hami/device_config.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/serve/decision_state.hpp"
#include "gpuslice/serve/dialect_check.hpp"
#include "gpuslice/serve/extender_metrics.hpp"
#include "gpuslice/serve/memory_cluster.hpp"
#include "gpuslice/serve/server.hpp"
#include "template_nodes.hpp"

namespace gpuslice::serve {

namespace {

struct ServeFlags {
  std::string snapshot, kubeconfig, quotas;
  bool in_cluster = false;
  std::string scheduler_name = "hami-scheduler";
  std::string listen = "0.0.0.0:8888";
  std::string metrics_listen = ":9395";
  std::string policy = "hami";
  std::string tls_cert, tls_key;
  std::string device_config;
  std::string template_registration;
  double reservation_ttl_s = 60;
  size_t max_body_bytes = 64u << 20;
  size_t full_report_nodes = StateOptions{}.full_report_nodes;
};

// Serves until SIGINT or SIGTERM.
void run(const ServeFlags& f) {
  if (f.reservation_ttl_s <= 0)
    throw core::InputError("command line", 0, "--reservation-ttl", "must be a positive number of seconds");
  // Signals are taken by sigwait below, not by a handler, on every thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  StateOptions so;
  so.policy = f.policy;
  so.reservation_ttl = std::chrono::milliseconds(static_cast<int64_t>(f.reservation_ttl_s * 1000));
  so.full_report_nodes = f.full_report_nodes;
  ServerOptions o;
  o.listen = parse_endpoint(f.listen, "--listen");
  o.metrics_listen = parse_endpoint(f.metrics_listen, "--metrics-listen");
  o.tls_cert = f.tls_cert;
  o.tls_key = f.tls_key;
  o.max_body_bytes = f.max_body_bytes;

  o.webhook.scheduler_name = f.scheduler_name;
  if (!f.device_config.empty())
    o.webhook.defaults =
        core::codec::parse_device_config(core::codec::read_text_file(f.device_config), f.device_config)
            .requests;
  so.defaults = o.webhook.defaults;
  if (!f.template_registration.empty())
    so.template_registrations = parse_template_registrations(
        core::codec::read_text_file(f.template_registration), f.template_registration);

  // Where the cluster lives: a snapshot served from memory (filter reserves,
  // bind commits, no API calls), or the API server (list + watch in;
  // patches, bindings and events out).
  std::unique_ptr<ClusterFeed> feed;
  std::unique_ptr<ClusterWriter> writer;
  std::string source;
  size_t nodes = 0, pods = 0;
  // What serve cannot serve is said now, never answered silently wrong.
  std::vector<std::string> unserved = check_servable(f.policy, nullptr, "");
  if (!f.snapshot.empty()) {
    auto snapshot = std::make_unique<SnapshotFeed>(f.snapshot, f.quotas);
    unserved = check_servable(f.policy, &snapshot->gpu_nodes(), f.snapshot);
    nodes = snapshot->node_count();
    pods = snapshot->pod_count();
    feed = std::move(snapshot);
    writer = std::make_unique<MemoryWriter>();
    so.release_lock_after_bind = true;  // no device plugin releases it
    source = f.snapshot;
  } else {
    const KubeConnection connection =
        f.in_cluster ? connection_in_cluster() : connection_from_kubeconfig(f.kubeconfig);
    KubeFeedOptions feed_options;
    feed_options.quotas = true;  // HAMi v2.10 checks namespace ResourceQuotas in its fit
    feed = make_kube_feed(connection, feed_options);
    writer = make_kube_writer(connection);
    so.release_lock_after_bind = false;  // HAMi's device plugin releases it after allocating
    source = connection.server;
  }
  for (const auto& line : unserved) std::cerr << "gpuslice serve: " << line << "\n";
  DecisionState state(so, *writer);
  Metrics metrics;
  Server server(state, metrics, o);
  feed->start(state);
  server.start();
  std::cerr << fmt::format("gpuslice serve: {}; policy {}; extender on {}://{}:{}, metrics on {}:{}\n",
                           f.snapshot.empty() ? fmt::format("cluster at {}", source)
                                              : fmt::format("{} nodes, {} pods from {}", nodes, pods, source),
                           f.policy, f.tls_cert.empty() ? "http" : "https", o.listen.host, server.port(),
                           o.metrics_listen.host, server.metrics_port());
  int sig = 0;
  sigwait(&signals, &sig);
  std::cerr << "gpuslice serve: stopping on signal " << sig << "\n";
  server.stop();
  feed->stop();
}

}  // namespace

void register_cli(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  auto* cmd =
      app.add_subcommand("serve", "kube-scheduler extender (HAMi's filter and bind) on the placement core");
  auto* snapshot =
      cmd->add_option("--snapshot", flags->snapshot, "serve a kubectl dump of nodes and pods, no API calls");
  auto* kubeconfig =
      cmd->add_option("--kubeconfig", flags->kubeconfig, "reach the API server as this kubeconfig's context");
  auto* in_cluster =
      cmd->add_flag("--in-cluster", flags->in_cluster, "reach the API server with the pod's service account");
  snapshot->excludes(kubeconfig)->excludes(in_cluster);
  cmd->add_option(
         "--quotas", flags->quotas,
         "with --snapshot: ResourceQuota objects (HAMi v2.10's limits.nvidia.com/gpumem and gpucores); "
         "the snapshot's own are read too")
      ->needs(snapshot);
  kubeconfig->excludes(in_cluster);
  cmd->add_option("--scheduler-name", flags->scheduler_name,
                  "schedulerName the /webhook gives pods that ask for HAMi resources")
      ->capture_default_str();
  cmd->add_option("--listen", flags->listen, "filter/bind listener host:port")->capture_default_str();
  cmd->add_option("--metrics-listen", flags->metrics_listen, "/metrics listener host:port")
      ->capture_default_str();
  cmd->add_option(
         "--policy", flags->policy,
         "hami (follows the pod's annotations), fgd, bestfit, ...; Koordinator's and KAI's are refused "
         "(docs/serve.md)")
      ->capture_default_str();
  cmd->add_option("--device-config", flags->device_config,
                  "HAMi's device-config.yaml (resource names, request defaults, migProfileAllowlist), "
                  "validated as HAMi does; default: the Helm chart's");
  cmd->add_option("--template-registration", flags->template_registration,
                  "JSON file: the card registration (hami.io/node-nvidia-register) of Cluster Autoscaler "
                  "template nodes that carry none, by node group labels (a group scaled from zero)");
  cmd->add_option("--tls-cert", flags->tls_cert, "serve HTTPS with this certificate (PEM)");
  cmd->add_option("--tls-key", flags->tls_key, "private key for --tls-cert (PEM)");
  cmd->add_option("--reservation-ttl", flags->reservation_ttl_s,
                  "seconds a filter's reservation waits for its bind")
      ->check(cli::number(0, 86400, true))
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", flags->max_body_bytes, "larger requests get 413")
      ->capture_default_str();
  cmd->add_option("--full-report-nodes", flags->full_report_nodes,
                  "filters naming at most this many nodes list every fitting node's score in the "
                  "FilteringSucceed event (HAMi's text); larger ones take the ranked fast path")
      ->capture_default_str();
  cmd->callback([flags] {
    if (flags->snapshot.empty() && flags->kubeconfig.empty() && !flags->in_cluster)
      throw core::InputError("command line", 0, "--snapshot",
                             "give one of --snapshot FILE, --kubeconfig FILE or --in-cluster");
    run(*flags);
  });
}

}  // namespace gpuslice::serve

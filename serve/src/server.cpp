#include "gpuslice/serve/server.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <charconv>
#include <chrono>
#include <iostream>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/serve/preemption_protocol.hpp"
#include "gpuslice/serve/protocol.hpp"
#include "gpuslice/serve/webhook.hpp"

namespace gpuslice::serve {

namespace {

constexpr const char* kJson = "application/json";

void json_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(encode_binding_result(message), kJson);  // {"Error": "..."}
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::unique_ptr<httplib::Server> make_server(const ServerOptions& o) {
  std::unique_ptr<httplib::Server> s;
  if (!o.tls_cert.empty()) {
    auto ssl = std::make_unique<httplib::SSLServer>(o.tls_cert.c_str(), o.tls_key.c_str());
    if (!ssl->is_valid())
      throw core::InputError(
          o.tls_cert, 0, "--tls-cert",
          fmt::format("cannot load the certificate and key ({} and {})", o.tls_cert, o.tls_key));
    s = std::move(ssl);
  } else {
    s = std::make_unique<httplib::Server>();
  }
  const int threads = o.threads;
  s->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  s->set_payload_max_length(o.max_body_bytes);
  s->set_keep_alive_max_count(1000);
  s->set_tcp_nodelay(true);  // else Nagle and delayed ACKs add ~40 ms per answer
  // Anything a handler throws becomes a JSON 500, never a dead server.
  s->set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    json_error(res, 500, what);
  });
  s->set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.status == 413) json_error(res, 413, "request body too large");
    if (res.status == 404 && res.body.empty()) json_error(res, 404, "no such path");
  });
  return s;
}

}  // namespace

int bind_endpoint(httplib::Server& s, const Endpoint& e, const char* what) {
  // Debian's build listens with a backlog of 5: a burst of kube-scheduler
  // connections overflows it (the kernel drops them). The socket is seen
  // here before bind, and listening again raises the backlog.
  int listening = -1;
  s.set_socket_options([&listening](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listening = sock;
  });
  int port = e.port;
  if (e.port == 0) {
    port = s.bind_to_any_port(e.host);
    if (port <= 0) throw std::runtime_error(fmt::format("cannot bind the {} listener on {}", what, e.host));
  } else if (!s.bind_to_port(e.host, e.port)) {
    throw std::runtime_error(fmt::format("cannot bind the {} listener on {}:{}", what, e.host, e.port));
  }
  if (listening >= 0) ::listen(listening, SOMAXCONN);
  return port;
}

Endpoint parse_endpoint(const std::string& text, const std::string& flag) {
  Endpoint e;
  std::string port = text;
  if (auto colon = text.rfind(':'); colon != std::string::npos) {
    if (colon > 0) e.host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  int value = -1;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || ptr != port.data() + port.size() || value < 0 || value > 65535)
    throw core::InputError("command line", 0, flag,
                           fmt::format("'{}' is not host:port (port 0..65535)", text));
  e.port = value;
  return e;
}

Server::Server(DecisionState& state, Metrics& metrics, ServerOptions options)
    : state_(state), metrics_(metrics), options_(std::move(options)) {
  // HAMi's webhook checks its quota cache (fitResourceQuota): here, the
  // book of the pods this extender holds.
  if (!options_.webhook.fits_quota)
    options_.webhook.fits_quota = [this](const std::string& ns, const core::QuotaUse& request) {
      return state_.quota_admits(ns, request);
    };
  if (options_.tls_cert.empty() != options_.tls_key.empty())
    throw core::InputError("command line", 0, options_.tls_cert.empty() ? "--tls-cert" : "--tls-key",
                           "--tls-cert and --tls-key go together");
}

Server::~Server() { stop(); }

void Server::start() {
  api_ = make_server(options_);
  metrics_server_ = make_server(options_);

  api_->Post("/filter", [this](const httplib::Request& req, httplib::Response& res) {
    const auto start = std::chrono::steady_clock::now();
    ExtenderArgs args;
    try {
      args = decode_extender_args(req.body);
    } catch (const ProtocolError& e) {
      metrics_.observe_filter(FilterOutcome::Error, seconds_since(start));
      return json_error(res, 400, e.what());
    }
    FilterOutcome outcome = FilterOutcome::Error;
    const ExtenderFilterResult result = state_.filter(args, &outcome);
    // Moved in, not copied (set_content copies): a refusal's answer names
    // every node, 420 kB at 10,000 nodes.
    res.body = encode_filter_result(result, args);
    res.set_header("Content-Type", kJson);
    metrics_.observe_filter(outcome, seconds_since(start));
  });
  api_->Post("/bind", [this](const httplib::Request& req, httplib::Response& res) {
    const auto start = std::chrono::steady_clock::now();
    ExtenderBindingArgs args;
    try {
      args = decode_binding_args(req.body);
    } catch (const ProtocolError& e) {
      metrics_.observe_bind(false, seconds_since(start));
      return json_error(res, 400, e.what());
    }
    const std::string error = state_.bind(args);
    res.set_content(encode_binding_result(error), kJson);
    metrics_.observe_bind(error.empty(), seconds_since(start));
  });
  // kube-scheduler's preempt verb (preemptVerb): the victims per node that
  // let the pod fit its cards, nodes where none helps left out.
  api_->Post("/preempt", [this](const httplib::Request& req, httplib::Response& res) {
    const auto start = std::chrono::steady_clock::now();
    try {
      const ExtenderPreemptionResult result = state_.preempt(decode_preemption_args(req.body));
      res.body = encode_preemption_result(result);
      res.set_header("Content-Type", kJson);
      metrics_.observe_preempt(true, seconds_since(start));
    } catch (const ProtocolError& e) {
      metrics_.observe_preempt(false, seconds_since(start));
      json_error(res, 400, e.what());
    }
  });
  // HAMi's mutating admission for pods (the MutatingWebhookConfiguration in
  // deploy/webhook.yaml points here).
  api_->Post("/webhook", [this](const httplib::Request& req, httplib::Response& res) {
    nlohmann::json review;
    try {
      review = nlohmann::json::parse(req.body);
      res.set_content(admit_pod(review, options_.webhook).dump(), kJson);
    } catch (const nlohmann::json::exception& e) {
      json_error(res, 400, std::string("not JSON: ") + e.what());
    } catch (const AdmissionDecodeError& e) {
      json_error(res, 400, e.what());
    }
  });
  auto healthz = [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  };
  auto readyz = [this](const httplib::Request&, httplib::Response& res) {
    const bool ready = state_.ready();
    res.status = ready ? 200 : 503;
    res.set_content(ready ? "ok\n" : "cluster not read yet\n", "text/plain");
  };
  auto metrics = [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.render(state_), "text/plain; version=0.0.4");
  };
  for (auto* s : {api_.get(), metrics_server_.get()}) {
    s->Get("/healthz", healthz);
    s->Get("/readyz", readyz);
  }
  metrics_server_->Get("/metrics", metrics);

  port_ = bind_endpoint(*api_, options_.listen, "--listen");
  metrics_port_ = bind_endpoint(*metrics_server_, options_.metrics_listen, "--metrics-listen");
  api_thread_ = std::thread([this] { api_->listen_after_bind(); });
  metrics_thread_ = std::thread([this] { metrics_server_->listen_after_bind(); });
  // stop() only reaches a server already listening: wait for both.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((!api_->is_running() || !metrics_server_->is_running()) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void Server::stop() {
  for (auto* s : {api_.get(), metrics_server_.get()})
    if (s) s->stop();
  if (api_thread_.joinable()) api_thread_.join();
  if (metrics_thread_.joinable()) metrics_thread_.join();
}

}  // namespace gpuslice::serve

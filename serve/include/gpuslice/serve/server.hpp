// The extender's HTTP side: POST /filter, /bind and /webhook, /healthz, /readyz on
// one listener; /metrics on another (HAMi serves it on :9395). Built on
// cpp-httplib (Debian's libcpp-httplib-dev, with OpenSSL for TLS).
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "gpuslice/serve/decision_state.hpp"
#include "gpuslice/serve/extender_metrics.hpp"
#include "gpuslice/serve/webhook.hpp"

namespace httplib {
class Server;
}

namespace gpuslice::serve {

struct Endpoint {
  std::string host = "0.0.0.0";
  int port = 0;  // 0: any free port
};
// "0.0.0.0:8888", ":9395", "8888"; throws core::InputError naming `flag`.
Endpoint parse_endpoint(const std::string& text, const std::string& flag);
// Binds `s` to the endpoint (port 0: any free one) with a full listen
// backlog; returns the port. Throws std::runtime_error naming `what`.
int bind_endpoint(httplib::Server& s, const Endpoint& e, const char* what);

struct ServerOptions {
  Endpoint listen{"0.0.0.0", 8888};
  Endpoint metrics_listen{"0.0.0.0", 9395};
  std::string tls_cert, tls_key;      // both or neither
  size_t max_body_bytes = 64u << 20;  // a 10,000-node NodeList is ~40 MiB
  int threads = 64;
  WebhookConfig webhook;  // POST /webhook
};

class Server {
 public:
  Server(DecisionState& state, Metrics& metrics, ServerOptions options);
  ~Server();  // stops
  // Binds both listeners and serves on threads of their own; throws
  // std::runtime_error when a port cannot be bound.
  void start();
  void stop();
  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }

 private:
  DecisionState& state_;
  Metrics& metrics_;
  ServerOptions options_;
  std::unique_ptr<httplib::Server> api_, metrics_server_;
  std::thread api_thread_, metrics_thread_;
  int port_ = 0, metrics_port_ = 0;
};

}  // namespace gpuslice::serve

// HTTP(S) to one Kubernetes API server: clients set up from a KubeConnection
// (CA, client certificate, bearer token), and the Status message of a failed
// call. The feed and the writer share it; protocol meaning stays with them.
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "gpuslice/serve/cluster_io.hpp"

namespace gpuslice::serve {

class KubeHttp {
 public:
  // Throws core::InputError when a certificate, key or CA cannot be read.
  explicit KubeHttp(KubeConnection connection);
  ~KubeHttp();
  KubeHttp(const KubeHttp&) = delete;
  KubeHttp& operator=(const KubeHttp&) = delete;

  // A client with auth and TLS set; `read_timeout` bounds one read (a watch
  // needs longer than a call).
  std::unique_ptr<httplib::ClientImpl> client(std::chrono::seconds read_timeout) const;
  // Headers every call carries (the bearer token, re-read from its file when due).
  httplib::Headers headers() const;
  // The server's path prefix ("" or "/k8s/clusters/c-1") prepended to API paths.
  const std::string& prefix() const { return prefix_; }
  const std::string& server() const { return connection_.server; }

 private:
  std::string token() const;

  KubeConnection connection_;
  bool https_ = false;
  std::string host_;
  int port_ = 0;
  std::string prefix_;
  std::string ca_path_;  // ca_file, or a private copy of ca_data
  bool ca_is_temporary_ = false;
  mutable std::mutex token_mutex_;
  mutable std::string token_;
  mutable std::chrono::steady_clock::time_point token_read_{};
};

// The message of a failed call: a Status object's `message` (what kubectl
// prints), else the body's first 200 bytes.
std::string status_message(int status, const std::string& body);

// "no answer from https://...: <httplib's reason>".
std::string transport_failure(const std::string& server, httplib::Error error);

}  // namespace gpuslice::serve

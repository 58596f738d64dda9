#include "kube_http.hpp"

#include <fmt/format.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::serve {

namespace {

constexpr auto kTokenRefresh = std::chrono::minutes(1);  // client-go's cached token file period

std::string pem_of(const std::string& data, const std::string& file) {
  return data.empty() ? core::codec::read_text_file(file) : data;
}

// PEM text into OpenSSL objects; the SSLClient takes its own references.
struct ClientIdentity {
  X509* cert = nullptr;
  EVP_PKEY* key = nullptr;
  ClientIdentity() = default;
  ClientIdentity(const ClientIdentity&) = delete;
  ClientIdentity& operator=(const ClientIdentity&) = delete;
  ~ClientIdentity() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
};

void load_identity(const KubeConnection& c, ClientIdentity& id) {
  const std::string cert_pem = pem_of(c.client_cert_data, c.client_cert_file);
  const std::string key_pem = pem_of(c.client_key_data, c.client_key_file);
  const std::string cert_where = c.client_cert_data.empty() ? c.client_cert_file : "client-certificate-data";
  const std::string key_where = c.client_key_data.empty() ? c.client_key_file : "client-key-data";
  BIO* bio = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
  id.cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (!id.cert) throw core::InputError(cert_where, 0, "", "is not a PEM certificate");
  bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  id.key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (!id.key) throw core::InputError(key_where, 0, "", "is not a PEM private key");
  if (X509_check_private_key(id.cert, id.key) != 1)
    throw core::InputError(key_where, 0, "", "does not match the client certificate");
}

}  // namespace

KubeHttp::KubeHttp(KubeConnection connection) : connection_(std::move(connection)) {
  static const std::regex url(R"(^(https?)://(\[[^\]]+\]|[^/:]+)(?::(\d+))?(/.*)?$)");
  std::smatch m;
  if (!std::regex_match(connection_.server, m, url))
    throw core::InputError(connection_.server, 0, "server", "is not an http(s)://host[:port] address");
  https_ = m[1] == "https";
  host_ = m[2];
  if (host_.size() > 2 && host_.front() == '[') host_ = host_.substr(1, host_.size() - 2);
  port_ = m[3].matched ? std::stoi(m[3]) : (https_ ? 443 : 80);
  prefix_ = m[4].matched ? m[4].str() : "";
  while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();

  if (https_ && !connection_.insecure_skip_tls_verify) {
    if (!connection_.ca_data.empty()) {
      // httplib trusts a CA file or the system store; the kubeconfig's CA
      // alone must be trusted (as client-go does), so it goes to a private file.
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = fmt::format("{}/gpuslice-kube-ca-XXXXXX", tmp && *tmp ? tmp : "/tmp");
      const int fd = mkstemp(pattern.data());
      if (fd < 0) throw core::InputError(pattern, 0, "", "cannot create a file for the kubeconfig's CA");
      const ssize_t n = write(fd, connection_.ca_data.data(), connection_.ca_data.size());
      close(fd);
      ca_path_ = pattern;
      ca_is_temporary_ = true;
      if (n != static_cast<ssize_t>(connection_.ca_data.size()))
        throw core::InputError(pattern, 0, "", "cannot write the kubeconfig's CA");
    } else if (!connection_.ca_file.empty()) {
      core::codec::read_text_file(connection_.ca_file);  // fail now, with the path
      ca_path_ = connection_.ca_file;
    }
  }
  if (!connection_.client_cert_data.empty() || !connection_.client_cert_file.empty()) {
    ClientIdentity id;
    load_identity(connection_, id);  // fail at start, not on the first call
  }
  if (!connection_.bearer_token_file.empty()) token();
}

KubeHttp::~KubeHttp() {
  if (ca_is_temporary_) unlink(ca_path_.c_str());
}

std::unique_ptr<httplib::ClientImpl> KubeHttp::client(std::chrono::seconds read_timeout) const {
  std::unique_ptr<httplib::ClientImpl> cli;
  if (https_) {
    std::unique_ptr<httplib::SSLClient> ssl;
    if (!connection_.client_cert_data.empty() || !connection_.client_cert_file.empty()) {
      ClientIdentity id;  // re-read: a rotated certificate is picked up on reconnect
      load_identity(connection_, id);
      ssl = std::make_unique<httplib::SSLClient>(host_, port_, id.cert, id.key);
    } else {
      ssl = std::make_unique<httplib::SSLClient>(host_, port_);
    }
    if (connection_.insecure_skip_tls_verify)
      ssl->enable_server_certificate_verification(false);
    else if (!ca_path_.empty())
      ssl->set_ca_cert_path(ca_path_);
    cli = std::move(ssl);
  } else {
    cli = std::make_unique<httplib::ClientImpl>(host_, port_);
  }
  cli->set_connection_timeout(std::chrono::seconds(10));
  cli->set_read_timeout(read_timeout);
  cli->set_write_timeout(std::chrono::seconds(10));
  cli->set_keep_alive(true);
  return cli;
}

std::string KubeHttp::token() const {
  std::lock_guard<std::mutex> lock(token_mutex_);
  if (connection_.bearer_token_file.empty()) return connection_.bearer_token;
  const auto now = std::chrono::steady_clock::now();
  if (token_.empty() || now - token_read_ >= kTokenRefresh) {
    std::string text = core::codec::read_text_file(connection_.bearer_token_file);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
      text.pop_back();
    if (!text.empty()) token_ = text;  // keep the last good token if the file is mid-rotation
    token_read_ = now;
  }
  return token_;
}

httplib::Headers KubeHttp::headers() const {
  httplib::Headers h{{"Accept", "application/json"}, {"User-Agent", "gpuslice-serve"}};
  const std::string t = token();
  if (!t.empty()) h.emplace("Authorization", "Bearer " + t);
  return h;
}

std::string status_message(int status, const std::string& body) {
  try {
    const auto j = nlohmann::json::parse(body);
    if (j.is_object() && j.value("kind", "") == "Status" && j.contains("message") && j["message"].is_string())
      return j["message"].get<std::string>();
  } catch (const nlohmann::json::exception&) {
  }
  std::string head = body.substr(0, 200);
  return head.empty() ? fmt::format("HTTP {}", status) : fmt::format("HTTP {}: {}", status, head);
}

std::string transport_failure(const std::string& server, httplib::Error error) {
  return fmt::format("no answer from {}: {}", server, httplib::to_string(error));
}

}  // namespace gpuslice::serve

// TLS as a kubeconfig asks for it: the cluster's own CA (from *-data), a
// client certificate the server checks, and insecure-skip-tls-verify. The
// certificates are made here, in memory, for 127.0.0.1.
#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <catch2/catch.hpp>
#include <thread>

#include "gpuslice/core/errors.hpp"
#include "gpuslice/serve/cluster_io.hpp"

using namespace gpuslice::serve;

namespace {

struct KeyPair {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  KeyPair() = default;
  KeyPair(const KeyPair&) = delete;
  KeyPair& operator=(const KeyPair&) = delete;
  ~KeyPair() {
    EVP_PKEY_free(key);
    X509_free(cert);
  }
};

void add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  REQUIRE(ext);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `cn`, signed by `issuer` (itself when null).
void make(KeyPair& out, const char* cn, const KeyPair* issuer, bool ca, const char* san) {
  out.key = EVP_EC_gen("prime256v1");
  REQUIRE(out.key);
  out.cert = X509_new();
  X509_set_version(out.cert, 2);
  static long serial = 1;
  ASN1_INTEGER_set(X509_get_serialNumber(out.cert), serial++);
  X509_gmtime_adj(X509_getm_notBefore(out.cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(out.cert), 3600);
  X509_set_pubkey(out.cert, out.key);
  X509_NAME* name = X509_get_subject_name(out.cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn), -1, -1, 0);
  X509* issuer_cert = issuer ? issuer->cert : out.cert;
  X509_set_issuer_name(out.cert, X509_get_subject_name(issuer_cert));
  add_ext(out.cert, issuer_cert, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
  if (san) add_ext(out.cert, issuer_cert, NID_subject_alt_name, san);
  REQUIRE(X509_sign(out.cert, issuer ? issuer->key : out.key, EVP_sha256()) > 0);
}

std::string pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

std::string pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

// An HTTPS server on loopback that wants a client certificate from `ca`
// and answers node patches.
struct TlsServer {
  httplib::SSLServer server;
  std::thread thread;
  int port = 0;
  int patches = 0;
  TlsServer(const KeyPair& ca, const KeyPair& serving) : server(serving.cert, serving.key, client_store(ca)) {
    REQUIRE(server.is_valid());
    server.Patch(R"(/api/v1/nodes/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      ++patches;
      CHECK(req.get_header_value("Authorization") == "Bearer tls-token");
      res.set_content(R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"node-a"}})",
                      "application/json");
    });
    port = server.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    thread = std::thread([this] { server.listen_after_bind(); });
    for (int i = 0; i < 500 && !server.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~TlsServer() {
    server.stop();
    thread.join();
  }
  static X509_STORE* client_store(const KeyPair& ca) {
    X509_STORE* store = X509_STORE_new();  // the server takes it
    X509_STORE_add_cert(store, ca.cert);
    return store;
  }
};

int status_of_patch(const KubeConnection& c) {
  try {
    make_kube_writer(c)->patch_node_annotations("node-a", {{"k", "v"}});
    return 200;
  } catch (const ApiError& e) {
    return e.status();
  }
}

}  // namespace

TEST_CASE("TLS: the kubeconfig's CA and client certificate are used - others are refused", "[serve][tls]") {
  KeyPair ca, serving, client, stranger_ca, stranger;
  make(ca, "cluster-ca", nullptr, true, nullptr);
  make(serving, "kube-apiserver", &ca, false, "IP:127.0.0.1,DNS:localhost");
  make(client, "system:serviceaccount:kube-system:gpuslice-scheduler", &ca, false, nullptr);
  make(stranger_ca, "other-ca", nullptr, true, nullptr);
  make(stranger, "someone-else", &stranger_ca, false, nullptr);
  TlsServer api(ca, serving);

  KubeConnection good;
  good.server = "https://127.0.0.1:" + std::to_string(api.port);
  good.bearer_token = "tls-token";
  good.ca_data = pem(ca.cert);
  good.client_cert_data = pem(client.cert);
  good.client_key_data = pem(client.key);
  CHECK(status_of_patch(good) == 200);
  CHECK(api.patches == 1);

  SECTION("a server certificate from another CA is not trusted") {
    KubeConnection c = good;
    c.ca_data = pem(stranger_ca.cert);
    CHECK(status_of_patch(c) == 0);
    CHECK(api.patches == 1);
  }
  SECTION("insecure-skip-tls-verify trusts any server") {
    KubeConnection c = good;
    c.ca_data.clear();
    c.insecure_skip_tls_verify = true;
    CHECK(status_of_patch(c) == 200);
  }
  SECTION("without a client certificate the server refuses the handshake") {
    KubeConnection c = good;
    c.client_cert_data.clear();
    c.client_key_data.clear();
    CHECK(status_of_patch(c) == 0);
  }
  SECTION("a client certificate from another CA is refused") {
    KubeConnection c = good;
    c.client_cert_data = pem(stranger.cert);
    c.client_key_data = pem(stranger.key);
    CHECK(status_of_patch(c) == 0);
  }
  SECTION("a key that does not match the certificate is a configuration error") {
    KubeConnection c = good;
    c.client_key_data = pem(stranger.key);
    CHECK_THROWS_AS(make_kube_writer(c), gpuslice::core::InputError);
  }
}

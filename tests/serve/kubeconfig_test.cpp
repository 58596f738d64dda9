// kubeconfig and in-cluster connections: what client-go reads, and clear
// refusals (file, line, field) for what `gpuslice serve` does not do.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "base64.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/serve/cluster_io.hpp"

using namespace gpuslice::serve;
using gpuslice::core::InputError;

namespace {

const std::filesystem::path kTmp = std::filesystem::path(GPUSLICE_SERVE_TEST_TMP) / "kubeconfig";

std::string write(const std::string& name, const std::string& text) {
  std::filesystem::create_directories(kTmp);
  const auto path = (kTmp / name).string();
  std::ofstream(path) << text;
  return path;
}

const std::string kPem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

std::string config(const std::string& cluster, const std::string& user) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: prod\n"
         "contexts:\n- name: other\n  context: {cluster: nowhere, user: nobody}\n"
         "- name: prod\n  context:\n    cluster: c1\n    user: u1\n    namespace: kube-system\n"
         "clusters:\n- name: c1\n  cluster:\n" +
         cluster + "users:\n- name: u1\n  user:\n" + user;
}

InputError input_error_of(const std::string& path) {
  try {
    connection_from_kubeconfig(path);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no InputError for " << path);
  return InputError("", 0, "", "");
}

}  // namespace

TEST_CASE("kubeconfig: the current context's server, CA file and token", "[serve][kubeconfig]") {
  const auto path =
      write("token.yaml", config("    server: https://10.0.0.1:6443\n    certificate-authority: pki/ca.crt\n",
                                 "    token: abc.def\n"));
  const KubeConnection c = connection_from_kubeconfig(path);
  CHECK(c.server == "https://10.0.0.1:6443");
  // Relative to the kubeconfig's folder, as clientcmd resolves it.
  CHECK(c.ca_file == (kTmp / "pki/ca.crt").string());
  CHECK(c.bearer_token == "abc.def");
  CHECK(c.client_cert_file.empty());
  CHECK_FALSE(c.insecure_skip_tls_verify);
}

TEST_CASE("kubeconfig: *-data fields are decoded, files and tokenFile kept as paths", "[serve][kubeconfig]") {
  const auto path =
      write("data.yaml", config("    server: https://api.example:443\n    certificate-authority-data: " +
                                    base64_encode(kPem) + "\n",
                                "    client-certificate-data: " + base64_encode(kPem) +
                                    "\n    client-key: /etc/keys/u1.key\n    tokenFile: /var/run/token\n"));
  const KubeConnection c = connection_from_kubeconfig(path);
  CHECK(c.ca_data == kPem);
  CHECK(c.ca_file.empty());
  CHECK(c.client_cert_data == kPem);
  CHECK(c.client_key_file == "/etc/keys/u1.key");
  CHECK(c.bearer_token_file == "/var/run/token");
}

TEST_CASE("kubeconfig: insecure-skip-tls-verify and a context with no user", "[serve][kubeconfig]") {
  const auto path = write("insecure.yaml",
                          "current-context: local\ncontexts:\n- name: local\n  context: {cluster: k}\n"
                          "clusters:\n- name: k\n  cluster: {server: 'https://127.0.0.1:6443', "
                          "insecure-skip-tls-verify: true}\n");
  const KubeConnection c = connection_from_kubeconfig(path);
  CHECK(c.insecure_skip_tls_verify);
  CHECK(c.bearer_token.empty());
}

TEST_CASE("kubeconfig: refusals name the file, line and field", "[serve][kubeconfig]") {
  SECTION("an exec credential plugin") {
    const auto path =
        write("exec.yaml", config("    server: https://10.0.0.1:6443\n",
                                  "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                                  "      command: aws\n"));
    const InputError e = input_error_of(path);
    CHECK(e.file() == path);
    CHECK(e.field() == "users.u1.user.exec");
    CHECK(e.line() == 20);  // the first line of exec's value
    CHECK(e.detail().find("credential plugins are not supported") != std::string::npos);
  }
  SECTION("an auth-provider plugin") {
    const auto path = write(
        "authp.yaml", config("    server: https://10.0.0.1:6443\n", "    auth-provider:\n      name: gcp\n"));
    CHECK(input_error_of(path).field() == "users.u1.user.auth-provider");
  }
  SECTION("no current context") {
    const auto path = write("nocontext.yaml", "apiVersion: v1\nkind: Config\nclusters: []\n");
    CHECK(input_error_of(path).field() == "current-context");
  }
  SECTION("a context naming a cluster that is not listed") {
    auto text = config("    server: https://10.0.0.1:6443\n", "    token: t\n");
    text.replace(text.find("cluster: c1"), 11, "cluster: c9");
    const auto e = input_error_of(write("nocluster.yaml", text));
    CHECK(e.field() == "context.cluster");
    CHECK(e.detail() == "names cluster 'c9', which clusters does not list");
  }
  SECTION("certificate-authority-data that is not base64") {
    const auto e = input_error_of(
        write("badb64.yaml",
              config("    server: https://10.0.0.1:6443\n    certificate-authority-data: not*base64\n",
                     "    token: t\n")));
    CHECK(e.field() == "clusters.c1.cluster.certificate-authority-data");
    CHECK(e.line() == 16);
  }
  SECTION("client-key-data that is base64 but not PEM") {
    const auto e = input_error_of(
        write("notpem.yaml", config("    server: https://10.0.0.1:6443\n",
                                    "    client-certificate-data: " + base64_encode(kPem) +
                                        "\n    client-key-data: " + base64_encode("hello") + "\n")));
    CHECK(e.field() == "users.u1.user.client-key-data");
  }
  SECTION("a certificate without its key") {
    const auto e = input_error_of(write(
        "nokey.yaml", config("    server: https://10.0.0.1:6443\n", "    client-certificate: u1.crt\n")));
    CHECK(e.field() == "users.u1.user.client-key");
  }
  SECTION("a server that is not a URL") {
    const auto e =
        input_error_of(write("badserver.yaml", config("    server: 10.0.0.1:6443\n", "    token: t\n")));
    CHECK(e.field() == "clusters.c1.cluster.server");
  }
  SECTION("a file that is not YAML") {
    const auto e = input_error_of(write("broken.yaml", "current-context: [unclosed\n"));
    CHECK(e.file().find("broken.yaml") != std::string::npos);
    CHECK(e.line() >= 1);
  }
}

TEST_CASE("in-cluster: the service account folder and KUBERNETES_SERVICE_HOST/PORT", "[serve][kubeconfig]") {
  const auto dir = kTmp / "serviceaccount";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "token") << "eyJhbGciOi.sa-token\n";
  std::ofstream(dir / "ca.crt") << kPem;
  KubeConnection c = connection_in_cluster(dir.string(), "10.96.0.1", "443");
  CHECK(c.server == "https://10.96.0.1:443");
  CHECK(c.bearer_token_file == (dir / "token").string());
  CHECK(c.ca_file == (dir / "ca.crt").string());
  CHECK(connection_in_cluster(dir.string(), "fd00::1", "443").server == "https://[fd00::1]:443");

  try {
    connection_in_cluster(dir.string(), "", "");
    FAIL("no error outside a pod");
  } catch (const InputError& e) {
    CHECK(e.field() == "KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT");
  }
  std::filesystem::remove(dir / "token");
  try {
    connection_in_cluster(dir.string(), "10.96.0.1", "443");
    FAIL("no error without a token");
  } catch (const InputError& e) {
    CHECK(e.file() == (dir / "token").string());
  }
}

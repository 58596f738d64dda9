// Where the API server is and how to prove who we are: a kubeconfig's current
// context (as client-go's clientcmd reads it) or the pod's service account.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>

#include "base64.hpp"
#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/serve/cluster_io.hpp"

namespace gpuslice::serve {

namespace {

using core::InputError;

struct Kubeconfig {
  std::string path;
  YAML::Node root;

  [[noreturn]] void fail(const YAML::Node& at, const std::string& field, const std::string& what) const {
    const int line = at && at.Mark().line >= 0 ? at.Mark().line + 1 : 0;
    throw InputError(path, line, field, what);
  }

  std::string scalar(const YAML::Node& n, const std::string& field) const {
    if (!n.IsScalar()) fail(n, field, "must be a string");
    return n.Scalar();
  }

  // clientcmd resolves relative file names against the kubeconfig's folder.
  std::string file_field(const YAML::Node& n, const std::string& field) const {
    std::filesystem::path p = scalar(n, field);
    if (p.empty()) fail(n, field, "is empty");
    if (p.is_relative()) p = std::filesystem::path(path).parent_path() / p;
    return p.string();
  }

  std::string data_field(const YAML::Node& n, const std::string& field) const {
    auto bytes = base64_decode(scalar(n, field));
    if (!bytes) fail(n, field, "is not base64 (kubeconfig *-data fields hold base64 of the PEM text)");
    if (bytes->find("-----BEGIN ") == std::string::npos)
      fail(n, field, "does not decode to PEM text (-----BEGIN ...)");
    return *bytes;
  }

  // contexts / clusters / users are lists of {name, <kind>: {...}}.
  YAML::Node named(const std::string& list, const std::string& kind, const std::string& name,
                   const YAML::Node& named_at, const std::string& named_field) const {
    YAML::Node items = root[list];
    if (items && !items.IsSequence()) fail(items, list, "must be a list");
    if (items)
      for (size_t i = 0; i < items.size(); ++i) {
        const YAML::Node item = items[i];
        const std::string where = fmt::format("{}[{}]", list, i);
        if (!item.IsMap()) fail(item, where, "must be a mapping");
        if (!item["name"]) fail(item, where + ".name", "is missing");
        if (scalar(item["name"], where + ".name") != name) continue;
        const YAML::Node body = item[kind];
        if (!body || body.IsNull()) return YAML::Node(YAML::NodeType::Map);
        if (!body.IsMap()) fail(body, where + "." + kind, "must be a mapping");
        return body;
      }
    fail(named_at, named_field, fmt::format("names {} '{}', which {} does not list", kind, name, list));
  }
};

}  // namespace

KubeConnection connection_from_kubeconfig(const std::string& path) {
  Kubeconfig kc{path, {}};
  const std::string text = core::codec::read_text_file(path);
  try {
    kc.root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(path, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", e.msg);
  }
  if (!kc.root.IsMap()) throw InputError(path, 0, "", "a kubeconfig must be a YAML mapping");

  const YAML::Node current = kc.root["current-context"];
  if (!current || kc.scalar(current, "current-context").empty())
    kc.fail(current ? current : kc.root, "current-context",
            "is not set (gpuslice serve uses the kubeconfig's current context)");
  const std::string context_name = current.Scalar();
  const YAML::Node context = kc.named("contexts", "context", context_name, current, "current-context");

  const YAML::Node cluster_ref = context["cluster"];
  if (!cluster_ref) kc.fail(context, "contexts." + context_name + ".cluster", "is missing");
  const std::string cluster_name = kc.scalar(cluster_ref, "context.cluster");
  const YAML::Node cluster = kc.named("clusters", "cluster", cluster_name, cluster_ref, "context.cluster");

  KubeConnection c;
  const std::string cl = "clusters." + cluster_name + ".cluster.";
  if (!cluster["server"]) kc.fail(cluster, cl + "server", "is missing");
  c.server = kc.scalar(cluster["server"], cl + "server");
  if (c.server.rfind("https://", 0) != 0 && c.server.rfind("http://", 0) != 0)
    kc.fail(cluster["server"], cl + "server", fmt::format("'{}' is not an http(s):// address", c.server));
  if (auto n = cluster["certificate-authority-data"])
    c.ca_data = kc.data_field(n, cl + "certificate-authority-data");
  else if (auto f = cluster["certificate-authority"])
    c.ca_file = kc.file_field(f, cl + "certificate-authority");
  if (auto n = cluster["insecure-skip-tls-verify"]) {
    const std::string v = kc.scalar(n, cl + "insecure-skip-tls-verify");
    if (v != "true" && v != "false") kc.fail(n, cl + "insecure-skip-tls-verify", "must be true or false");
    c.insecure_skip_tls_verify = v == "true";
  }
  for (const char* unsupported : {"tls-server-name", "proxy-url"})
    if (cluster[unsupported])
      kc.fail(cluster[unsupported], cl + unsupported, "is not supported by gpuslice serve");

  // No user is a valid context (an unauthenticated local proxy).
  if (const YAML::Node user_ref = context["user"]) {
    const std::string user_name = kc.scalar(user_ref, "context.user");
    const YAML::Node user = kc.named("users", "user", user_name, user_ref, "context.user");
    const std::string us = "users." + user_name + ".user.";
    // Credential plugins run programs named in the file; the server runs
    // with a service account or static credentials instead.
    for (const char* plugin : {"exec", "auth-provider"})
      if (user[plugin])
        kc.fail(user[plugin], us + plugin,
                "credential plugins are not supported by gpuslice serve; use a token, a token file or a "
                "client certificate (or --in-cluster)");
    for (const char* unsupported : {"username", "password", "as", "as-groups", "as-uid"})
      if (user[unsupported])
        kc.fail(user[unsupported], us + unsupported, "is not supported by gpuslice serve");
    if (auto n = user["token"]) c.bearer_token = kc.scalar(n, us + "token");
    if (auto n = user["tokenFile"]) c.bearer_token_file = kc.file_field(n, us + "tokenFile");
    if (auto n = user["client-certificate-data"])
      c.client_cert_data = kc.data_field(n, us + "client-certificate-data");
    else if (auto f = user["client-certificate"])
      c.client_cert_file = kc.file_field(f, us + "client-certificate");
    if (auto n = user["client-key-data"])
      c.client_key_data = kc.data_field(n, us + "client-key-data");
    else if (auto f = user["client-key"])
      c.client_key_file = kc.file_field(f, us + "client-key");
    const bool has_cert = !c.client_cert_data.empty() || !c.client_cert_file.empty();
    const bool has_key = !c.client_key_data.empty() || !c.client_key_file.empty();
    if (has_cert != has_key)
      kc.fail(user, us + (has_cert ? "client-key" : "client-certificate"),
              "is missing: a client certificate needs its key and the key its certificate");
  }
  if (c.server.rfind("http://", 0) == 0 && (!c.client_cert_data.empty() || !c.client_cert_file.empty()))
    kc.fail(cluster["server"], cl + "server", "client certificates need an https:// server");
  return c;
}

KubeConnection connection_in_cluster(const std::string& service_account_dir, const std::string& service_host,
                                     const std::string& service_port) {
  if (service_host.empty() || service_port.empty())
    throw InputError("--in-cluster", 0, "KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT",
                     "are not set: --in-cluster works inside a pod only (use --kubeconfig elsewhere)");
  const std::filesystem::path dir = service_account_dir;
  KubeConnection c;
  // An IPv6 service address needs brackets in a URL.
  const bool v6 = service_host.find(':') != std::string::npos;
  c.server = fmt::format("https://{}{}{}:{}", v6 ? "[" : "", service_host, v6 ? "]" : "", service_port);
  c.bearer_token_file = (dir / "token").string();
  // Read once now so a missing mount fails at start, with its path.
  if (core::codec::read_text_file(c.bearer_token_file).empty())
    throw InputError(c.bearer_token_file, 0, "", "the service-account token is empty");
  c.ca_file = (dir / "ca.crt").string();
  core::codec::read_text_file(c.ca_file);
  return c;
}

KubeConnection connection_in_cluster() {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  return connection_in_cluster("/var/run/secrets/kubernetes.io/serviceaccount", host ? host : "",
                               port ? port : "");
}

}  // namespace gpuslice::serve

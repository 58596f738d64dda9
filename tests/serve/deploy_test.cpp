// deploy/: every manifest parses, the kinds an operator needs are there, and
// the pieces point at each other (scheduler config -> extender port,
// Service -> container port, webhook -> Service, RBAC -> ServiceAccount).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>

#include "gpuslice/serve/webhook.hpp"

namespace {

std::vector<YAML::Node> load_deploy() {
  std::vector<YAML::Node> docs;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GPUSLICE_SOURCE_DIR) + "/deploy")) {
    if (entry.path().extension() != ".yaml") continue;
    for (const auto& doc : YAML::LoadAllFromFile(entry.path().string()))
      if (doc && !doc.IsNull()) docs.push_back(doc);
  }
  return docs;
}

YAML::Node one(const std::vector<YAML::Node>& docs, const std::string& kind) {
  YAML::Node found;
  int count = 0;
  for (const auto& d : docs)
    if (d["kind"].as<std::string>() == kind) {
      found = d;
      ++count;
    }
  REQUIRE(count == 1);
  return found;
}

YAML::Node container(const YAML::Node& deployment, const std::string& name) {
  for (const auto& c : deployment["spec"]["template"]["spec"]["containers"])
    if (c["name"].as<std::string>() == name) return c;
  FAIL("no container " << name);
  return {};
}

std::set<std::string> verbs(const YAML::Node& role, const std::string& resource) {
  std::set<std::string> out;
  for (const auto& rule : role["rules"])
    for (const auto& r : rule["resources"])
      if (r.as<std::string>() == resource)
        for (const auto& v : rule["verbs"]) out.insert(v.as<std::string>());
  return out;
}

}  // namespace

TEST_CASE("deploy: the manifests parse and hold what an operator applies", "[serve][deploy]") {
  const auto docs = load_deploy();
  std::multiset<std::string> kinds;
  for (const auto& d : docs) {
    REQUIRE(d["apiVersion"]);
    REQUIRE(d["kind"]);
    REQUIRE(d["metadata"]["name"]);
    kinds.insert(d["kind"].as<std::string>());
  }
  CHECK(kinds == std::multiset<std::string>{"ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                                            "ClusterRoleBinding", "ClusterRoleBinding", "RoleBinding",
                                            "ConfigMap", "Deployment", "Service",
                                            "MutatingWebhookConfiguration"});

  const YAML::Node deployment = one(docs, "Deployment");
  const YAML::Node service = one(docs, "Service");
  const YAML::Node config_map = one(docs, "ConfigMap");
  const YAML::Node webhook = one(docs, "MutatingWebhookConfiguration");
  const YAML::Node account = one(docs, "ServiceAccount");
  const YAML::Node role = one(docs, "ClusterRole");

  // The extender: where serve listens is where kube-scheduler calls it.
  const YAML::Node serve = container(deployment, "gpuslice-serve");
  std::vector<std::string> args;
  for (const auto& a : serve["command"]) args.push_back(a.as<std::string>());
  CHECK(args[0] == "gpuslice");
  CHECK(args[1] == "serve");
  CHECK(std::count(args.begin(), args.end(), "--in-cluster") == 1);
  auto listen = std::find_if(args.begin(), args.end(),
                             [](const std::string& a) { return a.rfind("--listen=", 0) == 0; });
  REQUIRE(listen != args.end());
  const std::string port = listen->substr(listen->rfind(':') + 1);
  int https_port = 0;
  for (const auto& p : serve["ports"])
    if (p["name"].as<std::string>() == "https") https_port = p["containerPort"].as<int>();
  CHECK(std::to_string(https_port) == port);

  const YAML::Node sched = YAML::Load(config_map["data"]["config.yaml"].as<std::string>());
  CHECK(sched["kind"].as<std::string>() == "KubeSchedulerConfiguration");
  CHECK(sched["apiVersion"].as<std::string>() == "kubescheduler.config.k8s.io/v1");
  CHECK(sched["profiles"][0]["schedulerName"].as<std::string>() ==
        gpuslice::serve::WebhookConfig{}.scheduler_name);
  const YAML::Node ext = sched["extenders"][0];
  CHECK(ext["urlPrefix"].as<std::string>() == "https://127.0.0.1:" + port);
  CHECK(ext["enableHTTPS"].as<bool>());  // serve has --tls-cert: the webhook needs HTTPS
  CHECK(std::count(args.begin(), args.end(), "--tls-cert=/tls/tls.crt") == 1);
  CHECK(ext["filterVerb"].as<std::string>() == "filter");
  CHECK(ext["bindVerb"].as<std::string>() == "bind");
  CHECK(ext["preemptVerb"].as<std::string>() == "preempt");
  CHECK(ext["nodeCacheCapable"].as<bool>());
  CHECK(ext["weight"].as<int>() >= 1);
  CHECK(ext["httpTimeout"].as<std::string>() == "30s");
  const gpuslice::core::codec::RequestDefaults names;
  std::set<std::string> managed;
  for (const auto& m : ext["managedResources"]) {
    CHECK(m["ignoredByScheduler"].as<bool>());
    managed.insert(m["name"].as<std::string>());
  }
  for (const auto& n :
       {names.resource_count, names.resource_memory, names.resource_cores, names.resource_memory_percentage})
    CHECK(managed.count(n) == 1);

  // kube-scheduler reads that ConfigMap where it is mounted.
  const YAML::Node kube_scheduler = container(deployment, "kube-scheduler");
  CHECK(kube_scheduler["command"][1].as<std::string>() ==
        "--config=" + kube_scheduler["volumeMounts"][0]["mountPath"].as<std::string>() + "/config.yaml");
  bool mounts_config = false;
  for (const auto& v : deployment["spec"]["template"]["spec"]["volumes"])
    if (v["configMap"] &&
        v["configMap"]["name"].as<std::string>() == config_map["metadata"]["name"].as<std::string>())
      mounts_config = true;
  CHECK(mounts_config);

  // The Service selects the pod and routes to serve's port.
  for (const auto& kv : service["spec"]["selector"])
    CHECK(
        deployment["spec"]["template"]["metadata"]["labels"][kv.first.as<std::string>()].as<std::string>() ==
        kv.second.as<std::string>());
  int service_port = 0;
  for (const auto& p : service["spec"]["ports"])
    if (p["targetPort"].as<std::string>() == "https") service_port = p["port"].as<int>();
  CHECK(service_port == 443);

  // The webhook calls that Service on /webhook for pod creations.
  const YAML::Node hook = webhook["webhooks"][0];
  CHECK(hook["clientConfig"]["service"]["name"].as<std::string>() ==
        service["metadata"]["name"].as<std::string>());
  CHECK(hook["clientConfig"]["service"]["namespace"].as<std::string>() ==
        service["metadata"]["namespace"].as<std::string>());
  CHECK(hook["clientConfig"]["service"]["port"].as<int>() == service_port);
  CHECK(hook["clientConfig"]["service"]["path"].as<std::string>() == "/webhook");
  CHECK(hook["rules"][0]["resources"][0].as<std::string>() == "pods");
  CHECK(hook["rules"][0]["operations"][0].as<std::string>() == "CREATE");
  // The scheduler's own pod is never sent to the webhook.
  CHECK(deployment["spec"]["template"]["metadata"]["labels"]["hami.io/webhook"].as<std::string>() ==
        "ignore");

  // RBAC: what the feed and the writer call, granted to the pod's account.
  CHECK(deployment["spec"]["template"]["spec"]["serviceAccountName"].as<std::string>() ==
        account["metadata"]["name"].as<std::string>());
  CHECK(verbs(role, "nodes") == std::set<std::string>{"get", "list", "watch", "patch"});
  CHECK(verbs(role, "pods") == std::set<std::string>{"get", "list", "watch", "patch"});
  CHECK(verbs(role, "pods/binding") == std::set<std::string>{"create"});
  CHECK(verbs(role, "resourcequotas") == std::set<std::string>{"get", "list", "watch"});
  CHECK(verbs(role, "events").count("create") == 1);
  std::set<std::string> bound_roles;
  for (const auto& d : docs) {
    const std::string kind = d["kind"].as<std::string>();
    if (kind != "ClusterRoleBinding" && kind != "RoleBinding") continue;
    CHECK(d["subjects"][0]["name"].as<std::string>() == account["metadata"]["name"].as<std::string>());
    CHECK(d["subjects"][0]["namespace"].as<std::string>() ==
          account["metadata"]["namespace"].as<std::string>());
    bound_roles.insert(d["roleRef"]["name"].as<std::string>());
  }
  CHECK(bound_roles == std::set<std::string>{"gpuslice-scheduler", "system:kube-scheduler",
                                             "system:volume-scheduler",
                                             "extension-apiserver-authentication-reader"});
}

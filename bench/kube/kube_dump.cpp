#include "kube_dump.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace gpuslice::bench {

namespace {

using json = nlohmann::json;  // std::map: keys sorted, as kubectl prints unstructured objects

// splitmix64: the same dump for the same seed on every machine.
struct Random {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
  std::string hex(int digits) {
    std::string s;
    while (static_cast<int>(s.size()) < digits) s += fmt::format("{:016x}", next());
    return s.substr(0, static_cast<size_t>(digits));
  }
  std::string uuid() {
    const std::string h = hex(32);
    return fmt::format("{}-{}-{}-{}-{}", h.substr(0, 8), h.substr(8, 4), h.substr(12, 4), h.substr(16, 4),
                       h.substr(20, 12));
  }
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // kube's generateName alphabet
  std::string suffix(int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += kAlphabet[below(27)];
    return s;
  }
  // A pod's last five characters, one per serial: random ones collide among
  // 200,000 pods (the birthday bound), and a dump must not list a pod twice.
  // The random draw is still made, so the rest of the dump stays as it was.
  std::string unique_suffix(int serial) {
    (void)suffix(5);
    constexpr uint64_t kSpace = 27ull * 27 * 27 * 27 * 27;
    uint64_t x = (static_cast<uint64_t>(serial) * 7919 + 4241) % kSpace;  // 7919 is prime to 27: a bijection
    std::string s(5, ' ');
    for (char& c : s) {
      c = kAlphabet[x % 27];
      x /= 27;
    }
    return s;
  }
};

struct CardModel {
  const char* type;     // HAMi's registered type
  const char* product;  // nvidia.com/gpu.product
  int64_t memory_mib;
  const char* instance;
};
constexpr std::array<CardModel, 3> kModels{{
    {"NVIDIA-A100-SXM4-80GB", "A100-SXM4-80GB", 81920, "p4de.24xlarge"},
    {"NVIDIA-H100-80GB-HBM3", "H100-80GB-HBM3", 81559, "p5.48xlarge"},
    {"NVIDIA-L40S", "L40S", 46068, "g6e.48xlarge"},
}};
constexpr int kCards = 8;

std::string timestamp(int day, int second) {
  const int h = second / 3600 % 24, m = second / 60 % 60, s = second % 60;
  return fmt::format("2026-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}Z", 9 + day / 28, 1 + day % 28, h, m, s);
}

json condition(const char* type, const char* status, const std::string& at, const char* reason = nullptr,
               const char* message = nullptr) {
  json c = {{"lastProbeTime", nullptr}, {"lastTransitionTime", at}, {"status", status}, {"type", type}};
  if (reason) c["reason"] = reason;
  if (message) c["message"] = message;
  return c;
}

struct NodeFacts {
  std::string name;
  const CardModel* model;
  std::vector<std::string> cards;  // uuids
  std::string ip;
};

json node_object(Random& r, int i, NodeFacts& facts) {
  facts.model = &kModels[static_cast<size_t>(i % 3)];
  facts.name = fmt::format("gpu-{}-{:05d}", i % 3 == 0 ? "a100" : i % 3 == 1 ? "h100" : "l40s", i);
  facts.ip = fmt::format("10.{}.{}.{}", 20 + i / 65536, i / 256 % 256, i % 256);
  nlohmann::ordered_json registration = nlohmann::ordered_json::array();  // HAMi's field order
  facts.cards.clear();
  for (int c = 0; c < kCards; ++c) {
    facts.cards.push_back("GPU-" + r.uuid());
    registration.push_back({{"id", facts.cards.back()},
                            {"index", c},
                            {"count", 10},
                            {"devmem", facts.model->memory_mib},
                            {"devcore", 100},
                            {"type", facts.model->type},
                            {"numa", c / 4},
                            {"mode", "hami-core"},
                            {"health", true}});
  }
  const std::string created = timestamp(i % 40, i * 7);
  json images = json::array();
  for (const char* image : {"nvcr.io/nvidia/pytorch", "docker.io/projecthami/hami"})
    images.push_back({{"names", json::array({fmt::format("{}@sha256:{}", image, r.hex(64)),
                                             fmt::format("{}:v{}.{}.{}", image, 1 + r.below(3), r.below(30),
                                                         r.below(10))})},
                      {"sizeBytes", 20000000 + r.below(2000000000)}});
  const json resources = {{"cpu", "192"},
                          {"ephemeral-storage", "1846698540Ki"},
                          {"hugepages-1Gi", "0"},
                          {"hugepages-2Mi", "0"},
                          {"memory", "2113407524Ki"},
                          {"nvidia.com/gpu", std::to_string(kCards * 10)},
                          {"pods", "110"}};
  json allocatable = resources;
  allocatable["cpu"] = "191500m";
  allocatable["ephemeral-storage"] = "1701919550077";
  allocatable["memory"] = "2113305124Ki";
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"annotations",
             {{"csi.volume.kubernetes.io/nodeid", fmt::format(R"({{"ebs.csi.aws.com":"i-{}"}})", r.hex(17))},
              {"hami.io/node-handshake", "Requesting_2026-11-23 09:58:41"},
              {"hami.io/node-nvidia-register", registration.dump()},
              {"kubeadm.alpha.kubernetes.io/cri-socket", "unix:///var/run/containerd/containerd.sock"},
              {"node.alpha.kubernetes.io/ttl", "0"},
              {"projectcalico.org/IPv4Address", facts.ip + "/16"},
              {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}}},
            {"creationTimestamp", created},
            {"labels",
             {{"beta.kubernetes.io/arch", "amd64"},
              {"beta.kubernetes.io/instance-type", facts.model->instance},
              {"beta.kubernetes.io/os", "linux"},
              {"gpu", "on"},
              {"kubernetes.io/arch", "amd64"},
              {"kubernetes.io/hostname", facts.name},
              {"kubernetes.io/os", "linux"},
              {"node.kubernetes.io/instance-type", facts.model->instance},
              {"nvidia.com/gpu.count", std::to_string(kCards)},
              {"nvidia.com/gpu.memory", std::to_string(facts.model->memory_mib)},
              {"nvidia.com/gpu.present", "true"},
              {"nvidia.com/gpu.product", facts.model->product},
              {"topology.kubernetes.io/region", "us-east-1"},
              {"topology.kubernetes.io/zone", fmt::format("us-east-1{}", "abcd"[i % 4])}}},
            {"name", facts.name},
            {"resourceVersion", std::to_string(880000 + i)},
            {"uid", r.uuid()}}},
          {"spec",
           {{"podCIDR", fmt::format("10.244.{}.0/24", i % 256)},
            {"podCIDRs", json::array({fmt::format("10.244.{}.0/24", i % 256)})},
            {"providerID", fmt::format("aws:///us-east-1a/i-{}", r.hex(17))}}},
          {"status",
           {{"addresses", json::array({{{"address", facts.ip}, {"type", "InternalIP"}},
                                       {{"address", facts.name}, {"type", "Hostname"}}})},
            {"allocatable", allocatable},
            {"capacity", resources},
            {"conditions", json::array({{{"lastHeartbeatTime", "2026-11-23T09:58:40Z"},
                                         {"lastTransitionTime", created},
                                         {"message", "kubelet has sufficient memory available"},
                                         {"reason", "KubeletHasSufficientMemory"},
                                         {"status", "False"},
                                         {"type", "MemoryPressure"}},
                                        {{"lastHeartbeatTime", "2026-11-23T09:58:40Z"},
                                         {"lastTransitionTime", created},
                                         {"message", "kubelet is posting ready status"},
                                         {"reason", "KubeletReady"},
                                         {"status", "True"},
                                         {"type", "Ready"}}})},
            {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
            {"images", images},
            {"nodeInfo",
             {{"architecture", "amd64"},
              {"bootID", r.uuid()},
              {"containerRuntimeVersion", "containerd://1.7.22"},
              {"kernelVersion", "6.1.0-27-amd64"},
              {"kubeProxyVersion", "v1.31.2"},
              {"kubeletVersion", "v1.31.2"},
              {"machineID", r.hex(32)},
              {"operatingSystem", "linux"},
              {"osImage", "Debian GNU/Linux 12 (bookworm)"},
              {"systemUUID", r.uuid()}}}}}};
}

struct Workload {
  const char* name;
  const char* image;
  int64_t memory_mib;  // per card
  int cores;
  int cards;
};
constexpr std::array<Workload, 6> kWorkloads{{
    {"llm-serve", "docker.io/vllm/vllm-openai:v0.6.3", 20000, 30, 1},
    {"notebook", "nvcr.io/nvidia/pytorch:24.10-py3", 8000, 20, 1},
    {"embed", "nvcr.io/nvidia/tritonserver:24.10-py3", 4000, 10, 1},
    {"finetune", "nvcr.io/nvidia/pytorch:24.10-py3", 40000, 60, 1},
    {"batch-infer", "nvcr.io/nvidia/tritonserver:24.10-py3", 10000, 25, 2},
    {"eval", "nvcr.io/nvidia/pytorch:24.10-py3", 16000, 40, 1},
}};

json gpu_pod(Random& r, const Workload& w, int64_t card_memory, int serial, const NodeFacts* node,
             const std::vector<int>& cards) {
  const std::string ns = fmt::format("team-{:02d}", serial % 37);
  const std::string app = fmt::format("{}-{}", w.name, serial % 211);
  const std::string hash = r.suffix(10);
  const std::string name = fmt::format("{}-{}-{}", app, hash, r.unique_suffix(serial));
  const std::string created = timestamp(40 + serial % 30, serial * 13);
  // L40S cards are smaller: the same workloads ask half there.
  const int64_t memory = card_memory < 60000 ? w.memory_mib / 2 : w.memory_mib;
  json limits = {{"cpu", "8"},
                 {"memory", fmt::format("{}Gi", 16 * w.cards)},
                 {"nvidia.com/gpu", std::to_string(w.cards)},
                 {"nvidia.com/gpucores", std::to_string(w.cores)},
                 {"nvidia.com/gpumem", std::to_string(memory)}};
  json requests = {{"cpu", fmt::format("{}m", 2000 + 500 * (serial % 4))},
                   {"memory", fmt::format("{}Gi", 8 * w.cards)}};
  json annotations = {{"prometheus.io/path", "/metrics?format=prometheus&scope=pod"}};
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"creationTimestamp", created},
                {"generateName", fmt::format("{}-{}-", app, hash)},
                {"labels", {{"app", app}, {"pod-template-hash", hash}, {"team", ns}}},
                {"name", name},
                {"namespace", ns},
                {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                                  {"blockOwnerDeletion", true},
                                                  {"controller", true},
                                                  {"kind", "ReplicaSet"},
                                                  {"name", fmt::format("{}-{}", app, hash)},
                                                  {"uid", r.uuid()}}})},
                {"resourceVersion", std::to_string(900000 + serial)},
                {"uid", r.uuid()}}},
              {"spec",
               {{"containers", json::array({{{"image", w.image},
                                             {"imagePullPolicy", "IfNotPresent"},
                                             {"name", "main"},
                                             {"resources", {{"limits", limits}, {"requests", requests}}},
                                             {"terminationMessagePath", "/dev/termination-log"},
                                             {"terminationMessagePolicy", "File"}}})},
                {"dnsPolicy", "ClusterFirst"},
                {"enableServiceLinks", true},
                {"preemptionPolicy", "PreemptLowerPriority"},
                {"priority", 0},
                {"restartPolicy", "Always"},
                {"schedulerName", "hami-scheduler"},
                {"securityContext", json::object()},
                {"serviceAccount", "default"},
                {"serviceAccountName", "default"},
                {"terminationGracePeriodSeconds", 30}}}};
  if (node) {
    std::string grant;
    for (int c : cards)
      grant += fmt::format("{},NVIDIA,{},{}:", node->cards[static_cast<size_t>(c)], memory, w.cores);
    grant += ";";
    annotations["hami.io/bind-phase"] = "success";
    annotations["hami.io/bind-time"] = "1763891000";
    annotations["hami.io/vgpu-devices-allocated"] = grant;
    annotations["hami.io/vgpu-devices-to-allocate"] = ";";
    annotations["hami.io/vgpu-node"] = node->name;
    annotations["hami.io/vgpu-time"] = "1763891000";
    pod["spec"]["nodeName"] = node->name;
    const std::string pod_ip = fmt::format("10.244.{}.{}", serial / 250 % 256, 2 + serial % 250);
    pod["status"] = {{"conditions", json::array({condition("Ready", "True", created),
                                                 condition("PodScheduled", "True", created)})},
                     {"hostIP", node->ip},
                     {"phase", "Running"},
                     {"podIP", pod_ip},
                     {"qosClass", "Burstable"},
                     {"startTime", created}};
  } else {
    // Pending, applied by hand: kubectl keeps the manifest it applied, a
    // JSON line ending in a newline (a literal block in YAML).
    json applied = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}, {"namespace", ns}}},
        {"spec",
         {{"containers",
           json::array({{{"image", w.image}, {"name", "main"}, {"resources", {{"limits", limits}}}}})},
          {"schedulerName", "hami-scheduler"}}}};
    annotations["kubectl.kubernetes.io/last-applied-configuration"] = applied.dump() + "\n";
    pod["metadata"].erase("ownerReferences");
    pod["metadata"].erase("generateName");
    pod["status"] = {
        {"conditions", json::array({condition(
                           "PodScheduled", "False", created, "Unschedulable",
                           "0/4000 nodes are available: 4000 node unregistered. preemption: 0/4000 nodes "
                           "are available: 4000 Preemption is not helpful for scheduling.")})},
        {"phase", "Pending"},
        {"qosClass", "Burstable"}};
  }
  pod["metadata"]["annotations"] = annotations;
  return pod;
}

json daemon_pod(Random& r, const NodeFacts& node, int which, int serial) {
  const bool plugin = which % 2 == 0;
  const std::string app = plugin ? "hami-device-plugin" : "kube-proxy";
  const std::string image =
      plugin ? "docker.io/projecthami/hami:v2.5.0" : "registry.k8s.io/kube-proxy:v1.31.2";
  const std::string name = fmt::format("{}-{}", app, r.unique_suffix(serial));
  const std::string created = timestamp(serial % 40, serial * 3);
  json containers = json::array();
  for (const char* c : {plugin ? "device-plugin" : "kube-proxy"}) {
    containers.push_back({{"image", image},
                          {"imagePullPolicy", "IfNotPresent"},
                          {"name", c},
                          {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}},
                          {"terminationMessagePath", "/dev/termination-log"},
                          {"terminationMessagePolicy", "File"},
                          {"volumeMounts", json::array({{{"mountPath", "/var/lib/kubelet/device-plugins"},
                                                         {"name", "device-plugin"}}})}});
  }
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"creationTimestamp", created},
        {"generateName", app + "-"},
        {"labels",
         {{"app.kubernetes.io/name", app},
          {"controller-revision-hash", "7c9d8f6b5"},
          {"pod-template-generation", "3"}}},
        {"name", name},
        {"namespace", "kube-system"},
        {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                          {"blockOwnerDeletion", true},
                                          {"controller", true},
                                          {"kind", "DaemonSet"},
                                          {"name", app},
                                          {"uid", r.uuid()}}})},
        {"resourceVersion", std::to_string(700000 + serial)},
        {"uid", r.uuid()}}},
      {"spec",
       {{"containers", containers},
        {"dnsPolicy", "ClusterFirst"},
        {"enableServiceLinks", true},
        {"hostNetwork", true},
        {"nodeName", node.name},
        {"preemptionPolicy", "PreemptLowerPriority"},
        {"priority", 2000001000},
        {"priorityClassName", "system-node-critical"},
        {"restartPolicy", "Always"},
        {"schedulerName", "default-scheduler"},
        {"securityContext", json::object()},
        {"serviceAccount", app},
        {"serviceAccountName", app},
        {"terminationGracePeriodSeconds", 30},
        {"volumes", json::array({{{"hostPath", {{"path", "/var/lib/kubelet/device-plugins"}, {"type", ""}}},
                                  {"name", "device-plugin"}}})}}},
      {"status",
       {{"conditions",
         json::array({condition("Ready", "True", created), condition("PodScheduled", "True", created)})},
        {"hostIP", node.ip},
        {"phase", "Running"},
        {"podIP", node.ip},
        {"qosClass", "Burstable"},
        {"startTime", created}}}};
}

// Every object in kubectl's order (nodes, then pods), each handed over and dropped.
DumpCounts for_each_object(const DumpShape& shape, const std::function<void(const json&, bool node)>& take) {
  DumpCounts counts;
  Random r{shape.seed};
  std::vector<NodeFacts> nodes(static_cast<size_t>(shape.nodes));
  for (int i = 0; i < shape.nodes; ++i) {
    take(node_object(r, i, nodes[static_cast<size_t>(i)]), true);
    ++counts.nodes;
  }
  int serial = 0;
  for (int i = 0; i < shape.nodes; ++i) {
    const NodeFacts& node = nodes[static_cast<size_t>(i)];
    const int gpu_pods = shape.gpu_pods_per_node - (i % 22 == 0 ? 1 : 0);
    for (int p = 0; p < gpu_pods && p < kCards; ++p) {
      const Workload& w = kWorkloads[static_cast<size_t>((i + p) % 6)];
      std::vector<int> cards{p};
      if (w.cards == 2) cards.push_back((p + 1) % kCards);
      take(gpu_pod(r, w, node.model->memory_mib, serial++, &node, cards), false);
      ++counts.gpu_pods;
    }
    for (int d = 0; d < shape.daemon_pods_per_node; ++d) {
      take(daemon_pod(r, node, d, serial++), false);
      ++counts.daemon_pods;
    }
    if (i % 5 < 2) {
      // Pending: mostly pods that fit somewhere, every 7th asks more than a card has.
      Workload w = kWorkloads[static_cast<size_t>(i % 6)];
      if (i % 7 == 0) w.memory_mib = 90000;
      take(gpu_pod(r, w, 81920, serial++, nullptr, {}), false);
      ++counts.pending_pods;
    }
  }
  return counts;
}

// Go's encoding/json escapes <, > and & (its HTML-safe default), as kubectl's JSON shows.
std::string go_escapes(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out += c;
  }
  return out;
}

void put(std::FILE* out, std::string_view s, DumpCounts& counts) {
  if (std::fwrite(s.data(), 1, s.size(), out) != s.size()) throw std::runtime_error("write failed");
  counts.bytes += s.size();
}

// go-yaml v2 (sigs.k8s.io/yaml, which kubectl prints with).
class YamlWriter {
 public:
  explicit YamlWriter(std::string& out) : out_(out) {}

  void mapping_body(const json& map, int indent) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      out_.append(static_cast<size_t>(indent), ' ');
      key_value(it.key(), it.value(), indent);
    }
  }

 private:
  void key_value(const std::string& key, const json& v, int indent) {
    scalar_text(key, indent, false);
    out_ += ':';
    value_after_indicator(v, indent, true);
  }

  // After "key:" or "- ": nested blocks go on the next lines.
  void value_after_indicator(const json& v, int indent, bool in_mapping) {
    if (v.is_object() && !v.empty()) {
      if (in_mapping) {
        out_ += '\n';
        mapping_body(v, indent + 2);
      } else {
        out_ += ' ';
        auto it = v.begin();
        key_value(it.key(), it.value(), indent + 2);
        for (++it; it != v.end(); ++it) {
          out_.append(static_cast<size_t>(indent + 2), ' ');
          key_value(it.key(), it.value(), indent + 2);
        }
      }
    } else if (v.is_array() && !v.empty()) {
      // A sequence in a mapping sits at its key's indent; one in a sequence nests by 2.
      const int at = in_mapping ? indent : indent + 2;
      if (in_mapping) {
        out_ += '\n';
      } else {
        out_ += ' ';
      }
      bool first = true;
      for (const auto& item : v) {
        if (!(first && !in_mapping)) out_.append(static_cast<size_t>(at), ' ');
        first = false;
        out_ += '-';
        value_after_indicator(item, at, false);
      }
    } else {
      out_ += ' ';
      scalar(v, indent);
      out_ += '\n';
    }
  }

  void scalar(const json& v, int indent) {
    if (v.is_null()) {
      out_ += "null";
    } else if (v.is_object()) {
      out_ += "{}";
    } else if (v.is_array()) {
      out_ += "[]";
    } else if (v.is_string()) {
      scalar_text(v.get_ref<const std::string&>(), indent, true);
    } else {
      out_ += v.dump();
    }
  }

  static bool looks_typed(const std::string& s) {
    static const char* const kWords[] = {"y",  "Y",    "yes",  "Yes",  "YES",   "n",     "N",     "no", "No",
                                         "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On",
                                         "ON", "off",  "Off",  "OFF",  "null",  "Null",  "NULL",  "~"};
    for (const char* w : kWords)
      if (s == w) return true;
    // Numbers (ints, floats, exponents) and dates resolve to other types.
    size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;
    bool digits = false, other = false;
    for (size_t j = i; j < s.size(); ++j) {
      const char c = s[j];
      if (c >= '0' && c <= '9')
        digits = true;
      else if (c != '.' && c != 'e' && c != 'E' && c != '_' && c != '-' && c != '+')
        other = true;
    }
    if (digits && !other) return true;
    return s.size() >= 10 && s[4] == '-' && s[7] == '-' && std::isdigit(static_cast<unsigned char>(s[0]));
  }

  static bool plain_allowed(const std::string& s) {
    if (s.empty() || looks_typed(s)) return false;
    if (std::string_view("-?:,[]{}#&*!|>'\"%@`").find(s[0]) != std::string_view::npos) return false;
    if (s.front() == ' ' || s.back() == ' ') return false;
    if (s.find(": ") != std::string::npos || s.find(" #") != std::string::npos || s.back() == ':')
      return false;
    for (char c : s)
      if (c == '\n' || c == '\t' || static_cast<unsigned char>(c) < 0x20) return false;
    return true;
  }

  void scalar_text(const std::string& s, int indent, bool value) {
    if (value && s.find('\n') != std::string::npos) {
      literal(s, indent);
      return;
    }
    const bool plain = plain_allowed(s);
    if (!plain) out_ += '\'';
    // Folded past column 80 at a single space, as go-yaml's emitter breaks.
    size_t line_start = out_.rfind('\n');
    line_start = line_start == std::string::npos ? 0 : line_start + 1;
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (c == ' ' && value && i > 0 && s[i - 1] != ' ' && i + 1 < s.size() && s[i + 1] != ' ' &&
          out_.size() - line_start > 80) {
        out_ += '\n';
        line_start = out_.size();
        out_.append(static_cast<size_t>(indent + 2), ' ');
        continue;
      }
      if (c == '\'' && !plain) out_ += '\'';
      out_ += c;
    }
    if (!plain) out_ += '\'';
  }

  void literal(const std::string& s, int indent) {
    size_t trailing = 0;
    while (trailing < s.size() && s[s.size() - 1 - trailing] == '\n') ++trailing;
    out_ += trailing == 0 ? "|-" : trailing == 1 ? "|" : "|+";
    out_ += '\n';
    size_t at = 0;
    const std::string body = s.substr(0, s.size() - trailing);
    while (at <= body.size()) {
      const size_t nl = body.find('\n', at);
      const std::string line = body.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
      if (!line.empty()) out_.append(static_cast<size_t>(indent + 2), ' ');
      out_ += line;
      out_ += '\n';
      if (nl == std::string::npos) break;
      at = nl + 1;
    }
    for (size_t i = 1; i < trailing; ++i) out_ += '\n';
    out_.pop_back();  // the caller ends the line
  }

  std::string& out_;
};

void write_file(const std::string& path, const std::function<void(std::FILE*)>& fill) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path);
  fill(f);
  if (std::fclose(f) != 0) throw std::runtime_error("cannot write " + path);
}

}  // namespace

DumpCounts write_kubectl_json(const DumpShape& shape, std::FILE* out, bool compact) {
  DumpCounts bytes;
  put(out, compact ? R"({"apiVersion":"v1","items":[)" : "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n",
      bytes);
  bool first = true;
  DumpCounts counts = for_each_object(shape, [&](const json& object, bool) {
    std::string text = go_escapes(object.dump(compact ? -1 : 4));
    if (!compact) {
      // Items sit 8 spaces in.
      std::string indented = "        ";
      for (char c : text) {
        indented += c;
        if (c == '\n') indented += "        ";
      }
      text = std::move(indented);
    }
    if (!first) put(out, compact ? "," : ",\n", bytes);
    first = false;
    put(out, text, bytes);
  });
  put(out,
      compact ? R"(],"kind":"List","metadata":{"resourceVersion":""}})"
              : "\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n "
                "   }\n}\n",
      bytes);
  counts.bytes = bytes.bytes;
  return counts;
}

DumpCounts write_kubectl_yaml(const DumpShape& shape, std::FILE* out) {
  DumpCounts bytes;
  put(out, "apiVersion: v1\nitems:\n", bytes);
  std::string text;
  DumpCounts counts = for_each_object(shape, [&](const json& object, bool) {
    text.clear();
    text += '-';
    // The first key rides on the dash, the rest line up under it.
    auto it = object.begin();
    std::string rest;
    YamlWriter writer(rest);
    json first_only = json::object();
    first_only[it.key()] = it.value();
    writer.mapping_body(first_only, 2);
    text += ' ';
    text += rest.substr(2);
    rest.clear();
    json others = object;
    others.erase(it.key());
    writer.mapping_body(others, 2);
    text += rest;
    put(out, text, bytes);
  });
  put(out, "kind: List\nmetadata:\n  resourceVersion: \"\"\n", bytes);
  counts.bytes = bytes.bytes;
  return counts;
}

DumpCounts write_api_lists(const DumpShape& shape, const std::string& dir) {
  DumpCounts counts;
  std::string nodes = "{\"apiVersion\":\"v1\",\"items\":[", pods = "{\"apiVersion\":\"v1\",\"items\":[";
  counts = for_each_object(shape, [&](const json& object, bool node) {
    json item = object;
    item.erase("apiVersion");
    item.erase("kind");
    std::string& list = node ? nodes : pods;
    if (list.back() != '[') list += ',';
    list += item.dump();
  });
  const std::string rv = std::to_string(1000000 + counts.nodes + counts.pods());
  nodes += R"(],"kind":"NodeList","metadata":{"resourceVersion":")" + rv + "\"}}";
  pods += R"(],"kind":"PodList","metadata":{"resourceVersion":")" + rv + "\"}}";
  write_file(dir + "/nodes.json", [&](std::FILE* f) { put(f, nodes, counts); });
  write_file(dir + "/pods.json", [&](std::FILE* f) { put(f, pods, counts); });
  return counts;
}

}  // namespace gpuslice::bench

#include "gpuslice/realgpu/local_run.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/codec/yaml_documents.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/place.hpp"
#include "gpuslice/realgpu/child_process.hpp"
#include "gpuslice/realgpu/clock.hpp"
#include "gpuslice/realgpu/node_files.hpp"

namespace gpuslice::realgpu {

using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& file, const YAML::Node& n, const std::string& field,
                      const std::string& why) {
  throw core::InputError(file, n.IsDefined() ? n.Mark().line + 1 : 0, field, why);
}

template <class T>
T scalar(const std::string& file, const YAML::Node& n, const std::string& field) {
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    bad(file, n, field,
        "expected " + std::string(std::is_same_v<T, std::string> ? "text" : "a whole number"));
  }
}

std::string tail(const std::string& text, size_t lines) {
  size_t pos = text.size();
  if (pos && text[pos - 1] == '\n') --pos;
  for (size_t n = 0; n < lines && pos != std::string::npos && pos > 0; ++n) pos = text.rfind('\n', pos - 1);
  return text.substr(pos == std::string::npos || pos == 0 ? 0 : pos + 1);
}

// GPUSLICE_FAKE_GPUS as the fake driver reads it: name:MiB:SMs[;...], 1 to
// 16 cards. Checked here so a typo is a clear error, not "no GPU found".
void check_fake_gpus(const std::string& path, const YAML::Node& at, const std::string& text) {
  const std::string shape = "write name:MiB:SMs[;name:MiB:SMs...], e.g. \"Tesla T4:15360:40\"";
  size_t cards = 0, pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find(';', pos), text.size());
    const std::string entry = text.substr(pos, end - pos);
    ++cards;
    const size_t sms = entry.rfind(':');
    const size_t mib = sms == std::string::npos || sms == 0 ? std::string::npos : entry.rfind(':', sms - 1);
    auto positive = [](const std::string& t) {
      return !t.empty() && t.size() < 10 && t.find_first_not_of("0123456789") == std::string::npos &&
             std::stol(t) > 0;
    };
    if (mib == std::string::npos || mib == 0 || !positive(entry.substr(mib + 1, sms - mib - 1)) ||
        !positive(entry.substr(sms + 1)))
      bad(path, at, "fake_gpus",
          fmt::format("card '{}' is not name:MiB:SMs with positive whole numbers; {}", entry, shape));
    pos = end + 1;
  }
  if (cards > 16) bad(path, at, "fake_gpus", fmt::format("{} cards; the fake driver takes 1 to 16", cards));
}

}  // namespace

LocalScenario load_local_scenario(const std::string& path) {
  const YAML::Node root = core::codec::load_yaml_document(core::codec::read_text_file(path), path);
  if (!root.IsMap()) throw core::InputError(path, 1, "", "expected a mapping with name and pods");
  LocalScenario s;
  s.source = path;
  for (const auto& kv : root) {
    if (!kv.first.IsScalar())
      bad(path, kv.first, "", "a field name must be plain text, not a list or a mapping");
    const auto key = kv.first.Scalar();
    if (key != "name" && key != "description" && key != "split" && key != "pods" && key != "fake_gpus" &&
        key != "monitor" && key != "feedback_period")
      bad(path, kv.first, key,
          "unknown field (known: name, description, split, fake_gpus, monitor, feedback_period, pods)");
  }
  if (root["name"]) s.name = scalar<std::string>(path, root["name"], "name");
  if (root["description"]) s.description = scalar<std::string>(path, root["description"], "description");
  if (root["fake_gpus"]) {
    s.fake_gpus = scalar<std::string>(path, root["fake_gpus"], "fake_gpus");
    check_fake_gpus(path, root["fake_gpus"], s.fake_gpus);
  }
  if (root["monitor"]) {
    try {
      s.monitor = root["monitor"].as<bool>();
    } catch (const YAML::Exception&) {
      bad(path, root["monitor"], "monitor", "expected true or false");
    }
  }
  if (root["feedback_period"]) {
    try {
      s.feedback_period = root["feedback_period"].as<double>();
    } catch (const YAML::Exception&) {
      bad(path, root["feedback_period"], "feedback_period", "expected seconds (a number)");
    }
    if (!(s.feedback_period >= 0.05 && s.feedback_period <= 3600))
      bad(path, root["feedback_period"], "feedback_period", "must be 0.05..3600 seconds");
  }
  if (root["split"]) {
    s.split = scalar<int>(path, root["split"], "split");
    if (s.split < 1 || s.split > 1000) bad(path, root["split"], "split", "must be 1..1000");
  }
  const YAML::Node pods = root["pods"];
  if (!pods || !pods.IsSequence() || pods.size() == 0) bad(path, root, "pods", "expected a list of pods");
  for (const auto& p : pods) {
    if (!p.IsMap()) bad(path, p, "pods", "each pod is a mapping");
    LocalPod pod;
    pod.line = p.Mark().line + 1;
    for (const auto& kv : p) {
      if (!kv.first.IsScalar())
        bad(path, kv.first, "pods", "a field name must be plain text, not a list or a mapping");
      const auto key = kv.first.Scalar();
      const YAML::Node& v = kv.second;
      const std::string field = "pods." + key;
      if (key == "name")
        pod.name = scalar<std::string>(path, v, field);
      else if (key == "gpu")
        pod.gpu = scalar<int>(path, v, field);
      else if (key == "gpumem")
        pod.gpumem_mib = scalar<int64_t>(path, v, field);
      else if (key == "gpucores")
        pod.gpucores = scalar<int>(path, v, field);
      else if (key == "core_policy")
        pod.core_policy = scalar<std::string>(path, v, field);
      else if (key == "expect")
        pod.expect = scalar<std::string>(path, v, field);
      else if (key == "expect_exit")
        pod.expect_exit = scalar<int>(path, v, field);
      else if (key == "priority")
        pod.priority = scalar<int>(path, v, field);
      else if (key == "command") {
        if (v.IsScalar())
          pod.command = {"/bin/sh", "-c", scalar<std::string>(path, v, field)};
        else if (v.IsSequence() && v.size() > 0)
          for (const auto& arg : v) pod.command.push_back(scalar<std::string>(path, arg, field));
        else
          bad(path, v, field, "a shell command line or a list of arguments");
      } else {
        bad(path, kv.first, field,
            "unknown field (known: name, gpu, gpumem, gpucores, core_policy, priority, command, expect, "
            "expect_exit)");
      }
    }
    if (pod.name.empty()) bad(path, p, "pods.name", "every pod needs a name");
    if (pod.gpu < 1 || pod.gpu > 16) bad(path, p["gpu"], "pods.gpu", "must be 1..16");
    if (pod.gpumem_mib < 0) bad(path, p["gpumem"], "pods.gpumem", "must not be negative");
    if (pod.gpucores < 0 || pod.gpucores > 100) bad(path, p["gpucores"], "pods.gpucores", "must be 0..100");
    if (p["priority"] && (pod.priority < 0 || pod.priority > 100))
      bad(path, p["priority"], "pods.priority", "must be 0 (highest) to 100");
    if (pod.core_policy != "default" && pod.core_policy != "force" && pod.core_policy != "disable")
      bad(path, p["core_policy"], "pods.core_policy", "use default, force or disable");
    if (pod.expect != "placed" && pod.expect != "unschedulable")
      bad(path, p["expect"], "pods.expect", "use placed or unschedulable");
    if (pod.command.empty() && pod.expect == "placed")
      bad(path, p, "pods.command", "a placed pod needs a command");
    s.pods.push_back(std::move(pod));
  }
  return s;
}

namespace {

// The pod as a manifest `gpuslice place` reads; a placed pod carries the
// annotations that say where it runs (so its usage counts for the next).
std::string pod_manifest(const LocalPod& p, const std::string& node = "",
                         const std::string& allocation = "") {
  std::string limits = fmt::format("nvidia.com/gpu: {}", p.gpu);
  if (p.gpumem_mib > 0) limits += fmt::format(", nvidia.com/gpumem: {}", p.gpumem_mib);
  if (p.gpucores > 0) limits += fmt::format(", nvidia.com/gpucores: {}", p.gpucores);
  const std::string annotations =
      node.empty()
          ? ""
          : fmt::format(", annotations: {{hami.io/vgpu-node: {}, hami.io/vgpu-devices-allocated: {}}}",
                        json(node).dump(), json(allocation).dump());
  return fmt::format(
      "apiVersion: v1\nkind: Pod\nmetadata: {{name: {}{}}}\nspec:\n  containers:\n  - name: main\n"
      "    resources: {{limits: {{{}}}}}\n",
      json(p.name).dump(), annotations, limits);
}

// A node monitor over the run's hook path while the pods run: HAMi's
// feedback every period, and what each pod's file says, as a monitor reads it.
class WatchedRun {
 public:
  WatchedRun(const std::string& hook_path, double period, std::map<std::string, size_t> pod_of_uid)
      : files_(hook_path, true), period_(period), pod_of_uid_(std::move(pod_of_uid)) {
    thread_ = std::thread([this] {
      while (!stop_) {
        pass();
        for (double slept = 0; slept < period_ && !stop_; slept += 0.02)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }
  ~WatchedRun() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  json view(size_t pod) const {
    const auto it = seen_.find(pod);
    if (it == seen_.end()) return json{{"passes", 0}};
    const Seen& s = it->second;
    return json{{"passes", s.passes},
                {"memory_used_peak_bytes", s.peak_used},
                {"memory_limit_bytes", s.limit},
                {"priority", s.priority},
                {"held_to_share_passes", s.held},
                {"blocked_by_priority_passes", s.blocked},
                {"launched", s.last_kernel_time > 0}};
  }

 private:
  struct Seen {
    int passes = 0, held = 0, blocked = 0, priority = 0;
    uint64_t peak_used = 0, limit = 0;
    int64_t last_kernel_time = 0;
  };
  void pass() {
    files_.rescan();
    files_.feedback();
    for (const auto& e : files_.entries()) {
      const auto it = pod_of_uid_.find(e.dir.pod_uid);
      if (!e.file || it == pod_of_uid_.end()) continue;
      Seen& s = seen_[it->second];
      uint64_t used = 0, limit = 0;
      for (int d = 0; d < e.file->device_count(); ++d) {
        used += e.file->memory(d).total;
        limit += e.file->memory_limit(d);
      }
      ++s.passes;
      s.peak_used = std::max(s.peak_used, used);
      s.limit = limit;
      s.priority = e.file->priority();
      s.held += e.file->utilization_switch() == 1;
      s.blocked += e.file->recent_kernel() < 0;
      s.last_kernel_time = std::max(s.last_kernel_time, e.file->last_kernel_time());
    }
  }

  NodeFiles files_;
  double period_;
  std::map<std::string, size_t> pod_of_uid_;
  std::map<size_t, Seen> seen_;  // read by view() only once the thread has stopped
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

RunReport run_locally(const LocalScenario& scenario, DriverChoice driver) {
  const Toolkit t = locate_toolkit(driver);
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{t.scratch};
  return run_locally(scenario, t);
}

RunReport run_locally(const LocalScenario& scenario, const Toolkit& t, double timeout_seconds) {
  RunReport report;
  report.scenario = scenario.name;
  report.driver = t.driver;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  report.node = host[0] ? host : "localhost";

  // On the fake driver, the scenario may say which cards the machine has.
  auto with_fleet = [&](std::map<std::string, std::string> env) {
    if (t.driver == "fake" && !scenario.fake_gpus.empty()) env["GPUSLICE_FAKE_GPUS"] = scenario.fake_gpus;
    return env;
  };
  // This machine's GPUs, as a HAMi registration.
  const ChildResult listed = run_child({t.probe, "devices"}, with_fleet(driver_environment(t)));
  json devices;
  try {
    devices = json::parse(listed.out.substr(0, listed.out.find('\n')))["devices"];
  } catch (const json::exception&) {
    throw std::runtime_error("cannot list this machine's GPUs: " + listed.out + listed.err);
  }
  if (!devices.is_array() || devices.empty()) throw std::runtime_error("no GPU found (" + listed.out + ")");
  json registration = json::array();
  std::map<std::string, int> index_of_uuid;
  for (const auto& d : devices) {
    registration.push_back({{"id", d["uuid"]},
                            {"index", d["index"]},
                            {"count", scenario.split},
                            {"devmem", d["memory_mib"]},
                            {"devcore", 100},
                            {"type", d["name"]},
                            {"numa", 0},
                            {"mode", "hami-core"},
                            {"health", true}});
    index_of_uuid[d["uuid"].get<std::string>()] = d["index"].get<int>();
  }
  report.registration = registration;
  const std::string nodes_yaml = fmt::format(
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: {}\n  annotations:\n    hami.io/node-nvidia-register: "
      "{}\n",
      json(report.node).dump(), json(registration.dump()).dump());

  // Two pods may share a name in the file; each still gets its own slice
  // (accounting file) and its own placed-pod manifest: later ones are keyed
  // by their position.
  std::vector<std::string> key(scenario.pods.size());
  for (size_t i = 0; i < scenario.pods.size(); ++i) {
    key[i] = scenario.pods[i].name;
    for (size_t j = 0; j < i; ++j)
      if (scenario.pods[j].name == scenario.pods[i].name)
        key[i] = fmt::format("{}.{}", scenario.pods[i].name, i);
  }
  // Place in order, each pod seeing the ones placed before it.
  std::string existing;
  std::vector<std::unique_ptr<Child>> running(scenario.pods.size());
  for (size_t i = 0; i < scenario.pods.size(); ++i) {
    LocalPod pod = scenario.pods[i];
    pod.name = key[i];
    PodOutcome out;
    out.name = scenario.pods[i].name;
    core::PlaceRequest req;
    req.nodes = {nodes_yaml, "registration of " + report.node};
    req.pod = {pod_manifest(pod), scenario.source};
    if (!existing.empty()) req.existing = core::TextInput{existing, "placed pods"};
    const core::PlaceOutcome placed = core::place(req);
    out.placed = placed.decision.placed();
    if (!out.placed) {
      for (const auto& [node, why] : placed.decision.failed) out.reason = why.format();
      if (out.reason.empty() && !placed.decision.events.empty())
        out.reason = placed.decision.events.back().message;
      out.as_expected = pod.expect == "unschedulable";
      report.pods.push_back(std::move(out));
      continue;
    }
    out.allocation = placed.allocation_annotation;
    existing += (existing.empty() ? "" : "---\n") + pod_manifest(pod, report.node, out.allocation);
    if (pod.command.empty()) {
      // Only a pod expected unschedulable may lack a command (the reader
      // refuses the rest), and this one fit: a larger card than the
      // scenario was written for. Say so; there is nothing to start.
      out.as_expected = false;
      out.reason =
          "the scenario expects it unschedulable, but it fits this machine's card (larger than the one "
          "the scenario was written for)";
      report.pods.push_back(std::move(out));
      continue;
    }
    // The environment HAMi's device plugin injects, per granted card.
    SliceSpec spec{pod.name, 0, 0, pod.core_policy, ""};
    spec.priority = pod.priority;
    auto env = with_fleet(slice_environment(t, spec));
    std::string visible;
    int ordinal = 0;
    const core::Node& node = placed.cluster.node(*placed.decision.node);
    for (const auto& grants : placed.decision.allocation.containers)
      for (const auto& g : grants) {
        const std::string& uuid = node.devices[static_cast<size_t>(g.device)].uuid;
        visible += (visible.empty() ? "" : ",") + std::to_string(index_of_uuid[uuid]);
        env["CUDA_DEVICE_MEMORY_LIMIT_" + std::to_string(ordinal)] = std::to_string(g.memory_mib) + "m";
        if (g.cores > 0 && g.cores < 100)
          env["CUDA_DEVICE_SM_LIMIT_" + std::to_string(ordinal)] = std::to_string(g.cores);
        out.cards.push_back(uuid);
        ++ordinal;
      }
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";  // CUDA ordinals in NVML's order
    env["CUDA_VISIBLE_DEVICES"] = visible;
    std::vector<std::string> argv = pod.command;
    for (auto& a : argv)
      if (a == "{probe}") a = t.probe;
    if (!argv.empty() && argv[0].find('/') == std::string::npos) argv.insert(argv.begin(), "/usr/bin/env");
    running[i] = std::make_unique<Child>(argv, env);
    out.started = true;
    report.pods.push_back(std::move(out));
  }
  // All placed pods run side by side, like pods on one node. Watch them all,
  // so each one's run time ends when it exits, not when its turn comes.
  std::unique_ptr<WatchedRun> watched;
  if (scenario.monitor) {
    std::map<std::string, size_t> pod_of_uid;
    for (size_t i = 0; i < scenario.pods.size(); ++i)
      if (running[i]) pod_of_uid[pod_uid_for(key[i])] = i;
    watched = std::make_unique<WatchedRun>(t.hook_path(), scenario.feedback_period, std::move(pod_of_uid));
  }
  auto all_exited = [&] {
    bool all = true;
    for (auto& c : running) all = (!c || c->exited()) && all;
    return all;
  };
  const double watch_until = monotonic_seconds() + (timeout_seconds > 0 ? timeout_seconds : 1e12);
  while (!all_exited() && monotonic_seconds() < watch_until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (size_t i = 0; i < scenario.pods.size(); ++i) {
    if (!running[i]) continue;
    // The pods started together: each one's limit counts from its start.
    const ChildResult r = running[i]->wait_for(timeout_seconds);
    PodOutcome& out = report.pods[i];
    out.exit_code = r.exit_code;
    out.seconds = r.seconds;
    out.output = r.out;
    out.output_tail = tail(r.out, 3);
    out.shim_lines = lines_containing(r.err, "[gpuslice ");
    const auto& pod = scenario.pods[i];
    // Without expect_exit any exit is fine, except the shell's "command not
    // found" (127) and "not executable" (126): the pod never ran at all.
    const bool ran = r.exit_code != 127 && r.exit_code != 126;
    out.as_expected = pod.expect == "placed" && (pod.expect_exit ? *pod.expect_exit == r.exit_code : ran);
    if (pod.expect == "unschedulable") out.reason = "placed, but the scenario expects it unschedulable";
    if (!ran && !pod.expect_exit)
      out.reason = r.exit_code == 127 ? "command not found (exit 127)" : "command not executable (exit 126)";
    if (r.timed_out) {
      out.as_expected = false;
      out.reason = fmt::format("still running after {:g} s: killed", timeout_seconds);
    }
  }
  if (watched) {
    watched->stop();
    for (size_t i = 0; i < scenario.pods.size(); ++i)
      if (running[i]) report.pods[i].monitor = watched->view(i);
  }
  return report;
}

bool RunReport::all_as_expected() const {
  for (const auto& p : pods)
    if (!p.as_expected) return false;
  return true;
}

json RunReport::to_json() const {
  json out = {{"scenario", scenario}, {"driver", driver}, {"node", node}, {"registration", registration}};
  out["pods"] = json::array();
  for (const auto& p : pods)
    out["pods"].push_back({{"name", p.name},
                           {"placed", p.placed},
                           {"reason", p.reason},
                           {"allocation", p.allocation},
                           {"cards", p.cards},
                           {"started", p.started},
                           {"exit_code", p.exit_code},
                           {"seconds", p.seconds},
                           {"output_tail", p.output_tail},
                           {"shim", p.shim_lines},
                           {"monitor", p.monitor},
                           {"as_expected", p.as_expected}});
  out["all_as_expected"] = all_as_expected();
  return out;
}

void RunReport::print(std::ostream& out) const {
  out << fmt::format("gpuslice realgpu run: {} on {} ({} driver, {} card(s))\n", scenario, node, driver,
                     registration.size());
  for (const auto& p : pods) {
    if (!p.placed) {
      out << fmt::format("  {:<16} unschedulable: {}{}\n", p.name, p.reason,
                         p.as_expected ? "" : "  (UNEXPECTED)");
      continue;
    }
    if (!p.started) {
      out << fmt::format("  {:<16} placed {}  not started: {}{}\n", p.name, p.allocation, p.reason,
                         p.as_expected ? "" : "  (UNEXPECTED)");
      continue;
    }
    out << fmt::format("  {:<16} placed {}  exit {} after {:.1f} s{}{}\n", p.name, p.allocation, p.exit_code,
                       p.seconds, p.reason.empty() ? "" : ": " + p.reason,
                       p.as_expected ? "" : "  (UNEXPECTED)");
    std::istringstream shim(p.shim_lines);
    for (std::string line; std::getline(shim, line);) out << "      shim: " << line << "\n";
    if (p.monitor.is_object() && p.monitor.value("passes", 0) > 0)
      out << fmt::format(
          "      monitor: peak {} MiB of {} MiB, priority {}, held to its share {} and blocked {} of {} "
          "passes\n",
          p.monitor["memory_used_peak_bytes"].get<uint64_t>() >> 20,
          p.monitor["memory_limit_bytes"].get<uint64_t>() >> 20, p.monitor["priority"].get<int>(),
          p.monitor["held_to_share_passes"].get<int>(), p.monitor["blocked_by_priority_passes"].get<int>(),
          p.monitor["passes"].get<int>());
    std::istringstream tail_lines(p.output_tail);
    for (std::string line; std::getline(tail_lines, line);) out << "      out:  " << line << "\n";
  }
  out << (all_as_expected() ? "all pods as expected\n" : "some pods NOT as expected\n");
}

}  // namespace gpuslice::realgpu

// gpuslice._gpuslice: the pybind11 bindings. A thin facade over the C++ core,
// simulator and capacity planner; no placement or simulation logic lives
// here. Run descriptions cross the boundary as JSON text (plain, picklable
// configs on the Python side), results as JSON text and column dicts that
// gpuslice/*.py turns into dicts and pandas DataFrames.
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <limits>
#include <memory>

#include "gpuslice/cli/memory_guard.hpp"
#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/gpu_policy.hpp"
#include "gpuslice/core/place.hpp"
#include "gpuslice/core/policy.hpp"
#include "gpuslice/defrag/defrag.hpp"
#include "gpuslice/defrag/outputs.hpp"
#include "gpuslice/plan/plan.hpp"
#include "gpuslice/sim/compare.hpp"
#include "gpuslice/sim/fleet.hpp"
#include "gpuslice/sim/openb.hpp"
#include "gpuslice/sim/report.hpp"
#include "gpuslice/sim/run_folder.hpp"
#include "gpuslice/sim/simulator.hpp"
#include "gpuslice/sim/snapshot.hpp"
#include "gpuslice/sim/timeline_columns.hpp"

namespace py = pybind11;
using nlohmann::json;
using nlohmann::ordered_json;

namespace gpuslice::python {

namespace {

std::string dump(const ordered_json& j) {
  return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

json parse_config(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw core::InputError("arguments", 0, "", "the run configuration is not a JSON object");
  return j;
}

template <class T>
std::optional<T> opt(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

// {"scenario_path" | "scenario_text" + "source" + "base_dir" | "openb_nodes" + "openb_pods",
//  "tune", "overrides", "policy", "gpu_policy", "queue", "seed"}
plan::RunSpec run_spec(const json& c) {
  plan::RunSpec s;
  try {
    s.scenario.path = c.value("scenario_path", "");
    s.scenario.text = opt<std::string>(c, "scenario_text");
    s.scenario.source = c.value("source", "<scenario>");
    s.scenario.base_dir = c.value("base_dir", ".");
    s.scenario.openb_nodes = c.value("openb_nodes", "");
    s.scenario.openb_pods = c.value("openb_pods", "");
    if (auto t = opt<double>(c, "tune")) s.scenario.tune = *t;
    s.scenario.scenario_tune = opt<double>(c, "scenario_tune");
    if (c.contains("overrides") && !c["overrides"].is_null()) s.scenario.overrides = c["overrides"];
    s.scenario.quotas_path = c.value("quotas", "");  // as --quotas FILE
    if (c.contains("snapshot") && !c["snapshot"].is_null()) {
      // {"path", "add_nodes": ["NODE.yaml:COUNT"], "cordon": [...], "assume_duration": "3h" | seconds}
      const json& j = c["snapshot"];
      sim::SnapshotRunSpec snap;
      snap.snapshot = j.at("path").get<std::string>();
      snap.add_nodes = j.value("add_nodes", std::vector<std::string>{});
      snap.cordon = j.value("cordon", std::vector<std::string>{});
      // As --node-groups FILE: the snapshot's nodes join Cluster Autoscaler's groups by label.
      if (j.contains("node_groups") && !j["node_groups"].is_null())
        snap.node_groups = j["node_groups"].get<std::string>();
      if (j.contains("assume_duration") && !j["assume_duration"].is_null()) {
        const json& d = j["assume_duration"];
        snap.assume_duration = d.is_string() ? sim::parse_duration(d.get<std::string>())
                                             : std::optional<double>(d.get<double>());
        if (!snap.assume_duration || !(*snap.assume_duration > 0))
          throw core::InputError(
              "arguments", 0, "assume_duration",
              fmt::format("'{}' is not a positive duration (write 45m, 2h30m, 3d or seconds)",
                          d.is_string() ? d.get<std::string>() : d.dump()));
      }
      s.scenario.snapshot = std::move(snap);
    }
    s.policy = opt<std::string>(c, "policy");
    s.gpu_policy = opt<std::string>(c, "gpu_policy");
    s.queue = opt<std::string>(c, "queue");
    if (c.contains("seed") && !c["seed"].is_null()) {
      if (!c["seed"].is_number_integer() ||
          (c["seed"].is_number_integer() && c["seed"].get<int64_t>() < 0 && !c["seed"].is_number_unsigned()))
        throw core::InputError("arguments", 0, "seed", "must be a non-negative integer");
      s.seed = c["seed"].get<uint64_t>();
    }
  } catch (const json::exception& e) {
    throw core::InputError("arguments", 0, "", std::string("bad run configuration: ") + e.what());
  }
  return s;
}

// Ctrl-C: runs release the GIL; the simulator's progress callback briefly
// takes it back to let Python run signal handlers (KeyboardInterrupt) and an
// optional Python progress callback. A raised exception stops the run and is
// re-raised once the GIL is held again.
class Interrupter {
 public:
  explicit Interrupter(py::object callback) : callback_(std::move(callback)) {}

  std::function<bool(double)> function() {
    return [this](double fraction) { return poll(fraction); };
  }
  bool poll(double fraction) {
    if (failed_) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(50) && fraction < 1.0) return true;
    last_ = now;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      error_ = std::make_unique<py::error_already_set>();
      failed_ = true;
      return false;
    }
    if (callback_ && !callback_.is_none()) {
      try {
        py::object r = callback_(fraction);
        if (!r.is_none() && !r.cast<bool>()) {
          stopped_ = true;
          return false;
        }
      } catch (py::error_already_set& e) {
        error_ = std::make_unique<py::error_already_set>(std::move(e));
        failed_ = true;
        return false;
      }
    }
    return true;
  }
  // With the GIL held: re-raise what a poll caught.
  void rethrow() {
    if (error_) {
      auto e = std::move(error_);
      e->restore();
      throw py::error_already_set();
    }
  }
  bool stopped() const { return stopped_; }

 private:
  py::object callback_;
  std::chrono::steady_clock::time_point last_{};
  std::unique_ptr<py::error_already_set> error_;
  bool failed_ = false, stopped_ = false;
};

// --------------------------------------------------------------- columns

template <class T, class F>
py::array_t<double> numbers(const std::vector<T>& rows, F get) {
  py::array_t<double> a(static_cast<py::ssize_t>(rows.size()));
  auto m = a.template mutable_unchecked<1>();
  for (size_t i = 0; i < rows.size(); ++i) m(static_cast<py::ssize_t>(i)) = get(rows[i]);
  return a;
}

template <class T, class F>
py::array_t<int64_t> integers(const std::vector<T>& rows, F get) {
  py::array_t<int64_t> a(static_cast<py::ssize_t>(rows.size()));
  auto m = a.template mutable_unchecked<1>();
  for (size_t i = 0; i < rows.size(); ++i) m(static_cast<py::ssize_t>(i)) = get(rows[i]);
  return a;
}

template <class T, class F>
py::list strings(const std::vector<T>& rows, F get) {
  py::list l(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) l[i] = py::str(get(rows[i]));
  return l;
}

double or_nan(double v) { return v < 0 ? std::nan("") : v; }

// The simulator's result, kept in C++ until Python asks for a table.
struct Result {
  sim::RunResult run;
  std::shared_ptr<core::Cluster> fleet;

  py::dict timeline() const {
    const auto& t = run.timeline;
    py::dict d;
    for (const auto& column : sim::timeline_columns()) {
      if (column.count)
        d[py::str(column.name.data(), column.name.size())] =
            integers(t, [&](const sim::TimelineRow& r) { return static_cast<int64_t>(r.*column.count); });
      else
        d[py::str(column.name.data(), column.name.size())] =
            numbers(t, [&](const sim::TimelineRow& r) { return r.*column.real; });
    }
    return d;
  }
  // card_use.csv as columns: one row per card each time a placement or a
  // departure changed it.
  py::dict card_use() const {
    const auto& c = run.card_use;
    py::dict d;
    d["time"] = numbers(c, [](const sim::CardUseRow& r) { return r.time; });
    d["node"] = strings(c, [this](const sim::CardUseRow& r) { return run.node_names[r.node]; });
    d["card"] = integers(c, [](const sim::CardUseRow& r) { return static_cast<int64_t>(r.card); });
    d["slots"] = integers(c, [](const sim::CardUseRow& r) { return static_cast<int64_t>(r.used.slots); });
    d["memory_mib"] = integers(c, [](const sim::CardUseRow& r) { return r.used.memory_mib; });
    d["cores"] = integers(c, [](const sim::CardUseRow& r) { return static_cast<int64_t>(r.used.cores); });
    d["card_memory_mib"] = integers(c, [](const sim::CardUseRow& r) { return r.card_memory_mib; });
    return d;
  }
  py::dict pods() const {
    // As pods.csv: a snapshot's pods placed before the run have no row.
    std::vector<sim::PodRecord> kept;
    const bool any_starting =
        std::any_of(run.pods.begin(), run.pods.end(), [](const sim::PodRecord& r) { return r.starting; });
    if (any_starting)
      std::copy_if(run.pods.begin(), run.pods.end(), std::back_inserter(kept),
                   [](const sim::PodRecord& r) { return !r.starting; });
    const auto& p = any_starting ? kept : run.pods;
    py::dict d;
    d["name"] = strings(p, [](const sim::PodRecord& r) { return r.name; });
    d["kind"] = strings(p, [](const sim::PodRecord& r) { return r.kind; });
    d["gpu_milli"] = integers(p, [](const sim::PodRecord& r) { return r.gpu_milli; });
    d["arrival"] = numbers(p, [](const sim::PodRecord& r) { return or_nan(r.arrival); });
    d["start"] = numbers(p, [](const sim::PodRecord& r) { return or_nan(r.start); });
    d["end"] = numbers(p, [](const sim::PodRecord& r) { return or_nan(r.end); });
    d["pending_seconds"] =
        numbers(p, [](const sim::PodRecord& r) { return r.start >= 0 ? r.start - r.arrival : std::nan(""); });
    d["status"] = strings(p, [](const sim::PodRecord& r) { return r.status; });
    d["node"] = strings(p, [](const sim::PodRecord& r) { return r.node; });
    d["allocation"] = strings(p, [](const sim::PodRecord& r) { return r.allocation; });
    d["reason"] = strings(p, [](const sim::PodRecord& r) { return r.reason; });
    d["origin"] = strings(p, [](const sim::PodRecord& r) { return r.origin; });
    d["shortfall"] = strings(p, [](const sim::PodRecord& r) { return r.shortfall; });
    // pods.csv's last column: the claim's allocation result under policy "dra", else "".
    d["claim_allocation"] = strings(p, [](const sim::PodRecord& r) { return r.claim_allocation; });
    return d;
  }
  py::dict events() const {
    const auto& e = run.events;
    py::dict d;
    d["time"] = numbers(e, [](const sim::EventRecord& r) { return r.time; });
    d["pod"] = strings(e, [](const sim::EventRecord& r) { return r.pod; });
    d["type"] = strings(e, [](const sim::EventRecord& r) { return r.type; });
    d["reason"] = strings(e, [](const sim::EventRecord& r) { return r.reason; });
    d["message"] = strings(e, [](const sim::EventRecord& r) { return r.message; });
    return d;
  }
};

// --------------------------------------------------------------- fleets

py::dict cards_of(const core::Cluster& c) {
  py::list node, uuid, type, model;
  std::vector<int64_t> index, memory, slots, cores, numa, healthy;
  for (size_t n = 0; n < c.size(); ++n) {
    const auto& nd = c.node(n);
    for (const auto& d : nd.devices) {
      node.append(nd.name);
      uuid.append(d.uuid);
      type.append(d.type);
      model.append(nd.model);
      index.push_back(d.index);
      memory.push_back(d.memory_mib);
      slots.push_back(d.slots);
      cores.push_back(d.cores);
      numa.push_back(d.numa);
      healthy.push_back(d.healthy ? 1 : 0);
    }
  }
  py::dict d;
  d["node"] = node;
  d["index"] = py::array_t<int64_t>(static_cast<py::ssize_t>(index.size()), index.data());
  d["uuid"] = uuid;
  d["type"] = type;
  d["model"] = model;
  d["memory_mib"] = py::array_t<int64_t>(static_cast<py::ssize_t>(memory.size()), memory.data());
  d["slots"] = py::array_t<int64_t>(static_cast<py::ssize_t>(slots.size()), slots.data());
  d["cores"] = py::array_t<int64_t>(static_cast<py::ssize_t>(cores.size()), cores.data());
  d["numa"] = py::array_t<int64_t>(static_cast<py::ssize_t>(numa.size()), numa.data());
  d["healthy"] = py::array_t<int64_t>(static_cast<py::ssize_t>(healthy.size()), healthy.data());
  return d;
}

py::dict nodes_of(const core::Cluster& c) {
  py::list name, model;
  std::vector<int64_t> gpus, cpu, mem;
  for (size_t n = 0; n < c.size(); ++n) {
    const auto& nd = c.node(n);
    name.append(nd.name);
    model.append(nd.model);
    gpus.push_back(static_cast<int64_t>(nd.devices.size()));
    cpu.push_back(nd.capacity.cpu_milli);
    mem.push_back(nd.capacity.memory_mib);
  }
  py::dict d;
  d["name"] = name;
  d["model"] = model;
  d["gpus"] = py::array_t<int64_t>(static_cast<py::ssize_t>(gpus.size()), gpus.data());
  d["cpu_milli"] = py::array_t<int64_t>(static_cast<py::ssize_t>(cpu.size()), cpu.data());
  d["memory_mib"] = py::array_t<int64_t>(static_cast<py::ssize_t>(mem.size()), mem.data());
  return d;
}

// [{"template": {name, model, cards, card_memory_mib, slots, cores, cpu_milli, memory_mib}, "count": n}]
core::Cluster fleet_from_groups(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_array())
    throw core::InputError("<dict>", 0, "fleet", "must be a list of {template: {...}, count: N}");
  std::vector<sim::FleetGroup> groups;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string f = "fleet[" + std::to_string(i) + "]";
    const json& g = j[i];
    if (!g.is_object() || !g.contains("template") || !g["template"].is_object())
      throw core::InputError("<dict>", 0, f, "must be {template: {...}, count: N}");
    const json& t = g["template"];
    // Each field by name with what it must be, never nlohmann's own wording.
    auto text = [&](const json& obj, const char* key, const std::string& where) -> std::string {
      if (!obj.contains(key)) throw core::InputError("<dict>", 0, where + "." + key, "is required");
      if (!obj[key].is_string()) throw core::InputError("<dict>", 0, where + "." + key, "must be text");
      return obj[key].get<std::string>();
    };
    auto whole = [&](const json& obj, const char* key, const std::string& where, int64_t fallback,
                     bool required, int64_t lo, int64_t hi) -> int64_t {
      if (!obj.contains(key) || obj[key].is_null()) {
        if (required) throw core::InputError("<dict>", 0, where + "." + key, "is required");
        return fallback;
      }
      const json& v = obj[key];
      if (!v.is_number_integer())
        throw core::InputError("<dict>", 0, where + "." + key, "must be a whole number");
      if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(hi)
                                 : (v.get<int64_t>() < lo || v.get<int64_t>() > hi))
        throw core::InputError("<dict>", 0, where + "." + key,
                               fmt::format("must be between {} and {}", lo, hi));
      return v.get<int64_t>();
    };
    const std::string tf = f + ".template";
    sim::FleetGroup fg;
    fg.count = static_cast<int>(whole(g, "count", f, 1, false, 0, 10'000'000));
    fg.node.name = text(t, "name", tf);
    if (std::string problem = core::codec::node_name_problem(fg.node.name); !problem.empty())
      throw core::InputError("<dict>", 0, tf + ".name", problem);
    fg.node.model = text(t, "model", tf);
    fg.node.cards = static_cast<int>(whole(t, "cards", tf, 1, false, 0, 64));
    fg.node.card_memory_mib =
        whole(t, "card_memory_mib", tf, 0, true, 1, std::numeric_limits<int32_t>::max());
    fg.node.slots = static_cast<int32_t>(whole(t, "slots", tf, 10, false, 1, 1'000'000));
    fg.node.cores = static_cast<int32_t>(whole(t, "cores", tf, 100, false, 1, 1'000'000));
    fg.node.cpu_milli = whole(t, "cpu_milli", tf, 0, false, 0, std::numeric_limits<int64_t>::max() / 4);
    fg.node.memory_mib = whole(t, "memory_mib", tf, 0, false, 0, std::numeric_limits<int64_t>::max() / 4);
    groups.push_back(fg);
  }
  return sim::build_fleet(groups);
}

py::dict request_to_dict(const core::PodRequest& r) {
  auto containers = [](const std::vector<core::ContainerRequest>& cs) {
    py::list l;
    for (const auto& c : cs) {
      py::dict d;
      d["name"] = c.name;
      d["gpus"] = c.count;
      d["memory_mib"] = c.memory_mib;
      d["memory_percent"] = c.memory_percent == core::kMemoryPercentUnset
                                ? py::object(py::none())
                                : py::object(py::int_(c.memory_percent));
      d["cores"] = c.cores;
      d["memory_bytes"] = c.memory_bytes;        // Koordinator's gpu-memory per card (0: not asked)
      d["memory_fraction"] = c.memory_fraction;  // KAI's gpu-fraction (0: not asked)
      d["priority"] = c.priority;
      d["vendor"] = c.vendor;
      l.append(d);
    }
    return l;
  };
  py::dict d;
  d["name"] = r.name;
  d["namespace"] = r.ns;
  d["init_containers"] = containers(r.init_containers);
  d["containers"] = containers(r.containers);
  d["cpu_milli"] = r.host.cpu_milli;
  d["memory_mib"] = r.host.memory_mib;
  d["node_policy"] = r.node_policy;
  d["gpu_policy"] = r.gpu_policy;
  d["gpu_isolation_provider"] = r.gpu_isolation_provider;
  d["use_types"] = r.selectors.use_types;
  d["nouse_types"] = r.selectors.nouse_types;
  d["wants_devices"] = r.wants_devices();
  return d;
}

}  // namespace

}  // namespace gpuslice::python

using namespace gpuslice;
using gpuslice::python::Interrupter;
using gpuslice::python::Result;

PYBIND11_MODULE(_gpuslice, m) {
  m.doc() = "gpuslice C++ core, simulator and capacity planner (use the gpuslice package)";

  // Never destroyed: a static Python object must not be released after the interpreter ends.
  static auto* input_error_type = new py::exception<core::InputError>(m, "InputError", PyExc_ValueError);
  input_error_type->doc() = "Bad input: .file, .line and .field say where, .detail what is wrong.";
  // A run the memory guard refuses (docs/simulator.md#memory): bad input
  // too, so an `except InputError` still catches it; .estimate_bytes and
  // .limit_bytes give the figures.
  static auto* memory_error_type =
      new py::exception<cli::MemoryLimitError>(m, "MemoryLimitError", input_error_type->ptr());
  memory_error_type->doc() = "A run refused before it starts: its memory estimate is above what is left.";
  py::register_exception_translator([](std::exception_ptr p) {
    const auto cls = py::reinterpret_borrow<py::object>(*input_error_type);
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cli::MemoryLimitError& e) {
      const auto memory_cls = py::reinterpret_borrow<py::object>(*memory_error_type);
      py::object inst = memory_cls(py::str(e.what()));
      inst.attr("file") = e.file();
      inst.attr("line") = e.line();
      inst.attr("field") = e.field();
      inst.attr("detail") = e.detail();
      inst.attr("estimate_bytes") = e.estimate_bytes();
      inst.attr("limit_bytes") = e.limit_bytes();
      PyErr_SetObject(memory_cls.ptr(), inst.ptr());
    } catch (const core::InputError& e) {
      py::object inst = cls(py::str(e.what()));
      inst.attr("file") = e.file();
      inst.attr("line") = e.line();
      inst.attr("field") = e.field();
      inst.attr("detail") = e.detail();
      PyErr_SetObject(cls.ptr(), inst.ptr());
    } catch (const sim::OutputError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const std::filesystem::filesystem_error& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const core::CodecError& e) {
      py::object inst = cls(py::str(e.what()));
      inst.attr("file") = "";
      inst.attr("line") = 0;
      inst.attr("field") = "";
      inst.attr("detail") = e.what();
      PyErr_SetObject(cls.ptr(), inst.ptr());
    }
  });

  m.def("policy_names", &core::policy_names, "Names of the registered placement policies.");
  m.def("policy_name_problem", &core::policy_name_problem, py::arg("name"),
        "Why a placement policy name is unknown ('' when it is registered).");
  m.def(
      "gpu_policy_problem", [](const std::string& text) { return core::gpu_policy_problem(text); },
      py::arg("text"), "Why a HAMi GPU policy string is not valid ('' when it is).");

  m.def(
      "place",
      [](const std::string& nodes_text, const std::string& nodes_source, const std::string& pod_text,
         const std::string& pod_source, std::optional<std::string> existing_text,
         const std::string& existing_source, std::optional<std::string> node_policy,
         std::optional<std::string> gpu_policy, std::optional<std::string> policy,
         std::optional<std::string> quotas_text, const std::string& quotas_source) {
        core::PlaceRequest req;
        if (quotas_text) req.quotas = core::TextInput{*quotas_text, quotas_source};
        if (policy && !policy->empty()) req.policy = policy;
        req.nodes = {nodes_text, nodes_source};
        req.pod = {pod_text, pod_source};
        if (existing_text) req.existing = core::TextInput{*existing_text, existing_source};
        if (node_policy && !node_policy->empty()) req.node_policy = node_policy;
        if (gpu_policy && !gpu_policy->empty()) req.gpu_policy = gpu_policy;
        std::string out;
        {
          py::gil_scoped_release release;
          out = python::dump(core::to_json(core::place(req)));
        }
        return out;
      },
      py::arg("nodes_text"), py::arg("nodes_source"), py::arg("pod_text"), py::arg("pod_source"),
      py::arg("existing_text") = py::none(), py::arg("existing_source") = "",
      py::arg("node_policy") = py::none(), py::arg("gpu_policy") = py::none(), py::arg("policy") = py::none(),
      py::arg("quotas_text") = py::none(), py::arg("quotas_source") = "",
      "One placement as `gpuslice place --json` (JSON text).");

  m.def(
      "parse_pods",
      [](const std::string& text, const std::string& source) {
        py::list out;
        for (const auto& doc : core::codec::parse_pods(text, source)) {
          py::dict d = python::request_to_dict(doc.request);
          d["line"] = doc.line;
          d["assigned_node"] = doc.assigned_node;
          d["allocated"] = doc.allocated;
          out.append(d);
        }
        return out;
      },
      py::arg("text"), py::arg("source") = "<pod>", "Pod requests from Pod manifests, with HAMi's defaults.");

  m.def(
      "decode_allocation",
      [](const std::string& text) {
        py::list containers;
        for (const auto& c : core::codec::decode_allocation_text(text)) {
          py::list grants;
          for (const auto& g : c) grants.append(py::make_tuple(g.uuid, g.vendor, g.memory_mib, g.cores));
          containers.append(grants);
        }
        return containers;
      },
      py::arg("text"),
      "hami.io/vgpu-devices-allocated as [[(uuid, vendor, memory_mib, cores), ...] per container].");

  py::class_<core::Cluster, std::shared_ptr<core::Cluster>>(m, "Cluster")
      .def_property_readonly("node_count", &core::Cluster::size)
      .def_property_readonly("gpu_count", [](const core::Cluster& c) { return c.device_count(); })
      .def("cards", &python::cards_of)
      .def("nodes", &python::nodes_of);

  m.def("fleet_from_manifests", [](const std::string& text, const std::string& source) {
    auto c = std::make_shared<core::Cluster>();
    for (auto& nd : core::codec::parse_nodes(text, source)) c->add_node(std::move(nd.node));
    return c;
  });
  m.def(
      "fleet_from_openb",
      [](const std::string& text, const std::string& source, int32_t slots) {
        return std::make_shared<core::Cluster>(sim::load_openb_nodes(text, source, slots));
      },
      py::arg("text"), py::arg("source"), py::arg("slots") = 1000);
  m.def("fleet_from_groups", [](const std::string& json_text) {
    return std::make_shared<core::Cluster>(python::fleet_from_groups(json_text));
  });
  m.def("fleet_from_run", [](const std::string& config) {
    const auto spec = python::run_spec(python::parse_config(config));
    std::shared_ptr<core::Cluster> c;
    {
      py::gil_scoped_release release;
      c = std::make_shared<core::Cluster>(plan::load(spec).fleet);
    }
    return c;
  });

  py::class_<Result, std::shared_ptr<Result>>(m, "RunResult")
      .def_property_readonly("summary_json", [](const Result& r) { return python::dump(r.run.summary); })
      .def_property_readonly("interrupted", [](const Result& r) { return r.run.interrupted; })
      .def_property_readonly("fleet", [](const Result& r) { return r.fleet; })
      .def("timeline", &Result::timeline)
      .def("card_use", &Result::card_use)
      .def("pods", &Result::pods)
      .def("events", &Result::events)
      .def("write_outputs", [](const Result& r, const std::string& dir) {
        py::gil_scoped_release release;
        sim::write_outputs(r.run, dir);
      });

  m.def(
      "simulate",
      [](const std::string& config, py::object progress) {
        const auto spec = python::run_spec(python::parse_config(config));
        auto result = std::make_shared<Result>();
        Interrupter interrupter(progress);
        {
          py::gil_scoped_release release;
          const sim::Scenario scenario = plan::load(spec);
          sim::RunOptions options = plan::options_for(scenario, spec);
          options.progress = interrupter.function();
          result->fleet = std::make_shared<core::Cluster>(scenario.fleet);
          result->run = sim::simulate(scenario, options);
        }
        interrupter.rethrow();
        return result;
      },
      py::arg("config"), py::arg("progress") = py::none(),
      "Runs one simulation (JSON run configuration); releases the GIL, Ctrl-C raises KeyboardInterrupt.");

  m.def(
      "summarize",
      [](const std::string& config) {
        // One run reduced to its summary (JSON text): what a sweep task ships back.
        const auto spec = python::run_spec(python::parse_config(config));
        std::string out;
        Interrupter interrupter{py::none()};
        {
          py::gil_scoped_release release;
          out = python::dump(plan::run(spec, interrupter.function()).summary);
        }
        interrupter.rethrow();
        return out;
      },
      py::arg("config"));

  m.def(
      "plan_capacity",
      [](const std::string& config, const std::vector<std::string>& targets,
         const std::vector<std::string>& vary, int min_count, int max_count,
         const std::vector<uint64_t>& seeds, const std::string& search, int curve_points, py::object progress,
         const std::vector<std::string>& prices, bool autoscale) {
        plan::PlanRequest req;
        req.run = python::run_spec(python::parse_config(config));
        for (const auto& t : targets) req.targets.push_back(plan::parse_target(t));
        req.vary = vary;
        req.min_count = min_count;
        req.max_count = max_count;
        req.seeds = seeds;
        req.search = search;
        req.curve_points = curve_points;
        for (const auto& p : prices) req.prices.push_back(plan::parse_price(p));
        req.autoscale = autoscale;  // plan --autoscale: the node groups' max
        Interrupter interrupter(progress);
        plan::PlanResult result;
        std::string out;
        {
          py::gil_scoped_release release;
          result = plan::plan_capacity(req, interrupter.function());
          out = python::dump(plan::to_json(result));
        }
        interrupter.rethrow();
        return out;
      },
      py::arg("config"), py::arg("targets"), py::arg("vary"), py::arg("min_count"), py::arg("max_count"),
      py::arg("seeds"), py::arg("search"), py::arg("curve_points"), py::arg("progress") = py::none(),
      py::arg("prices") = std::vector<std::string>{}, py::arg("autoscale") = false,
      "Capacity planning (JSON result: count, counts, curve, ...; priced: cost, prices, cheaper_misses).");

  m.def("metric_names", &plan::standard_metrics);

  // gpuslice.compare: compare.csv's text, as `gpuslice compare` writes it.
  m.def(
      "compare_folders",
      [](const std::vector<std::string>& dirs) { return sim::compare_csv(sim::load_compared_runs(dirs)); },
      py::arg("dirs"), "compare.csv of run folders (labels and errors as `gpuslice compare`).");
  m.def(
      "run_folder_summary",
      [](const std::string& dir) { return python::dump(sim::read_run_folder(dir, false).summary); },
      py::arg("dir"),
      "summary.json of a run folder (JSON text), the folder read as `gpuslice compare` reads it.");
  m.def(
      "compare_summaries",
      [](const std::vector<std::string>& labels, const std::vector<std::string>& dirs,
         const std::vector<std::string>& summaries) {
        std::vector<sim::ComparedRun> runs;
        for (size_t i = 0; i < labels.size() && i < dirs.size() && i < summaries.size(); ++i) {
          sim::ComparedRun r{labels[i], dirs[i], {}};
          r.run.summary = ordered_json::parse(summaries[i], nullptr, false);
          if (!r.run.summary.is_object())
            throw core::InputError("arguments", 0, "runs",
                                   fmt::format("run '{}' has no summary object", labels[i]));
          runs.push_back(std::move(r));
        }
        return sim::compare_csv(runs);
      },
      py::arg("labels"), py::arg("dirs"), py::arg("summaries"), "compare.csv of summaries (JSON texts).");
  m.def(
      "defrag",
      [](const std::string& config) {
        // {"snapshot", "for_pods", "for_queue", "free_cards", "policy", "gpu_policy", "max_moves",
        //  "movable", "protect", "add", "search", "search_budget", "out", "quotas", "device_config"}
        const json c = python::parse_config(config);
        defrag::RequestWords w;
        std::optional<std::string> out;
        try {
          w.snapshot = c.value("snapshot", "");
          w.for_pods = python::opt<std::vector<std::string>>(c, "for_pods");
          w.for_queue = c.value("for_queue", false);
          w.free_cards = python::opt<std::string>(c, "free_cards");
          w.policy = c.value("policy", w.policy);
          w.gpu_policy = c.value("gpu_policy", w.gpu_policy);
          w.max_moves = c.value("max_moves", w.max_moves);
          w.movable = c.value("movable", "");
          w.protect = c.value("protect", std::vector<std::string>{});
          w.add = python::opt<std::string>(c, "add");
          w.search = c.value("search", w.search);
          w.search_budget = c.value("search_budget", w.search_budget);
          w.quotas = c.value("quotas", "");
          w.device_config = c.value("device_config", "");
          out = python::opt<std::string>(c, "out");
        } catch (const json::exception& e) {
          throw core::InputError("arguments", 0, "", std::string("bad defrag arguments: ") + e.what());
        }
        std::string summary, moves;
        {
          py::gil_scoped_release release;
          const auto result = defrag::defrag(defrag::request_of(w));
          if (out) defrag::write_outputs(result, *out);
          summary = python::dump(defrag::summary_json(result));
          moves = defrag::moves_csv(result);
        }
        return py::make_tuple(summary, moves);
      },
      py::arg("config"), "gpuslice defrag: (summary.json text, moves.csv text).");
  m.def("defrag_move_columns", &defrag::move_columns, "moves.csv's columns, in order.");
}

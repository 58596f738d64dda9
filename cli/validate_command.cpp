// `gpuslice validate FILE...`: reads each file as what it looks like (Kubernetes
// manifests, a scenario, an openb CSV, a realgpu scenario) without running
// anything; prints one line per file and exits 2 when any file is bad.
#include "validate_command.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <iostream>

#include "gpuslice/core/codec/kube_reader.hpp"
#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/codec/resource_quota.hpp"
#include "gpuslice/core/codec/yaml_documents.hpp"
#include "gpuslice/core/errors.hpp"
#include "io.hpp"
#ifdef GPUSLICE_WITH_SIM
#include "gpuslice/sim/openb.hpp"
#include "gpuslice/sim/scenario.hpp"
#endif
#ifdef GPUSLICE_WITH_REALGPU
#include "gpuslice/realgpu/local_run.hpp"
#endif

namespace gpuslice::cli {

namespace {

bool ends_with_csv(const std::string& path) {
  if (path.size() < 4) return false;
  std::string ext = path.substr(path.size() - 4);
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".csv";
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// What one file holds, in a few words; throws InputError when it is bad.
std::string check_file(const std::string& path) {
  const std::string text = read_file(path);
  if (ends_with_csv(path)) {
#ifdef GPUSLICE_WITH_SIM
    const std::string header = first_line(text);
    if (header.find("sn") != std::string::npos && header.find("model") != std::string::npos) {
      const auto fleet = sim::load_openb_nodes(text, path);
      return fmt::format("openb node list, {} nodes, {} GPUs", fleet.size(), fleet.device_count());
    }
    if (header.find("num_gpu") != std::string::npos) {
      sim::OpenbOptions replay;
      replay.resample = false;
      const auto rows = sim::load_openb_pods(text, path, core::Cluster{}, replay);
      sim::require_gpu_demand(rows, path);  // what a resampled replay needs
      return fmt::format("openb pod list, {} pods", rows.size());
    }
    throw core::InputError(path, 1, "",
                           "a CSV with neither openb node columns (sn, model) nor pod ones (num_gpu)");
#else
    throw core::InputError(path, 0, "", "this build has no simulator to read openb CSVs");
#endif
  }
  // Kubernetes objects through the one reader (a dump may be large); a file
  // without any may be a scenario, a small hand-written file. Nodes are
  // completed as a snapshot completes them (a Koordinator Device's cards,
  // KAI's GPU labels), so what simulate would refuse is refused here.
  std::vector<core::codec::NodeDocument> nodes;
  std::vector<core::codec::DeviceDocument> devices;
  size_t pods = 0, quotas = 0;
  core::codec::read_kube_objects(
      core::codec::KubeText::from_string(text, path),
      [&](core::codec::KubeObject&& object, const core::codec::ReadContext& context) {
        if (const auto* n = std::get_if<core::codec::NodeObject>(&object)) {
          nodes.push_back(core::codec::node_document(*n, context));
        } else if (const auto* p = std::get_if<core::codec::PodObject>(&object)) {
          core::codec::pod_document(*p, context);
          ++pods;
        } else if (const auto* d = std::get_if<core::codec::DeviceObject>(&object)) {
          devices.push_back(core::codec::device_document(*d, context));
        } else if (const auto* q = std::get_if<core::codec::ResourceQuotaObject>(&object)) {
          core::codec::namespace_quota(*q, context);  // HAMi's keys read as HAMi reads them
          ++quotas;
        }
      });
  std::vector<std::string> warnings;
  core::codec::complete_dialect_nodes(nodes, devices, path, warnings);
  for (const std::string& w : warnings) std::cerr << "warning: " << w << "\n";
  if (!nodes.empty() || pods > 0 || quotas > 0)
    return fmt::format("manifests, {} nodes, {} pods{}{}", nodes.size(), pods,
                       devices.empty() ? "" : fmt::format(", {} Koordinator Devices", devices.size()),
                       quotas == 0 ? "" : fmt::format(", {} ResourceQuotas", quotas));
  const auto docs = core::codec::load_yaml_documents(text, path);
  const YAML::Node* root = nullptr;
  for (const auto& d : docs)
    if (d && !d.IsNull()) {
      root = &d;
      break;
    }
  // A scenario names a fleet, node groups (Cluster Autoscaler's), or both.
  if (root && root->IsMap() && !(*root)["kind"] && ((*root)["fleet"] || (*root)["node_groups"])) {
#ifdef GPUSLICE_WITH_SIM
    const sim::Scenario s = sim::load_scenario(path);
    if (!s.node_groups.empty())
      return fmt::format("scenario '{}', {} nodes and {} node groups", s.name, s.fleet.size(),
                         s.node_groups.size());
    return fmt::format("scenario '{}', {} nodes", s.name, s.fleet.size());
#else
    throw core::InputError(path, 0, "", "this build has no simulator to read scenarios");
#endif
  }
  if (root && root->IsMap() && !(*root)["kind"] && (*root)["pods"]) {
#ifdef GPUSLICE_WITH_REALGPU
    const auto s = realgpu::load_local_scenario(path);
    return fmt::format("realgpu scenario '{}', {} pods", s.name, s.pods.size());
#else
    throw core::InputError(path, 0, "", "this build has no realgpu runner to read its scenarios");
#endif
  }
  throw core::InputError(path, 0, "kind", "no Node or Pod objects, and not a scenario");
}

}  // namespace

void register_validate_command(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Check files without running anything: manifests, scenarios, openb CSVs (exit 2 if any is bad)");
  cmd->add_option("files", *files, "files to check")->required();
  cmd->callback([files] {
    size_t bad = 0;
    for (const auto& f : *files) {
      try {
        const std::string what = check_file(f);  // before printing: it may throw
        std::cout << f << ": ok (" << what << ")\n";
      } catch (const core::InputError& e) {
        ++bad;
        std::cerr << e.what() << "\n";
      }
    }
    if (bad) throw CLI::RuntimeError(2);
  });
}

}  // namespace gpuslice::cli

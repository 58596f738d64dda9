// dra_snapshot_bench [--nodes 4000] [--dir DIR]: one fleet read two ways
// (issue 38's goal: the DRA dump within 1.5x of the HAMi one).
//   HAMi: the generated `kubectl get nodes,pods -A -o json` (bench/kube/
//     kube_dump.hpp, 8 cards a node), read by sim::load_snapshot into the
//     fleet and its starting usage.
//   DRA: the same fleet written as DRA objects from that snapshot (Nodes, one
//     ResourceSlice of 8 HAMi-DRA devices a node, a ResourceClaim with its
//     allocation per running GPU pod, the pods naming their claims), read by
//     the one reader and interpreted (dra::read_dra_dump), then made the
//     allocator's model: each node's pools (slices indexed by node) and the
//     allocated state of every claim.
// Prints the median of 5 runs of each, and their ratio. The files are
// generated here, never committed.
//
// --write-only: writes the two dumps of one fleet for timing whole commands
// (`gpuslice simulate --snapshot FILE`) like for like, and exits:
//   hami-lean.json: the snapshot's nodes with HAMi's registration, its
//     running pods with HAMi's allocation annotations, its pending pods
//     asking nvidia.com/gpu, gpumem, gpucores;
//   dra.json: the same nodes with a ResourceSlice each, the same running
//     pods holding allocated ResourceClaims, the same pending pods naming an
//     unallocated claim each (HAMi-DRA's webhook claims).
// The pods carry the same fields besides their GPUs in both.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/dialects/dra/allocator.hpp"
#include "gpuslice/core/dialects/dra/hami_dra.hpp"
#include "gpuslice/core/dialects/dra/read.hpp"
#include "gpuslice/core/dialects/hami/allocation_annotation.hpp"
#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/sim/snapshot.hpp"
#include "kube/kube_dump.hpp"

using namespace gpuslice;

namespace {

double seconds(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string quantity_bytes_mi(int64_t mib) { return fmt::format("{}Mi", mib); }

// The snapshot's fleet and running pods as `kubectl get nodes,pods,resourceslices,resourceclaims -A -o json`.
void write_dra_dump(const sim::ClusterSnapshot& snap, const std::string& path) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  fmt::print(out, "{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n");
  bool first = true;
  auto item = [&](const std::string& json) {
    fmt::print(out, "{}{}", first ? "" : ",\n", json);
    first = false;
  };
  const std::string driver = core::dra::kHamiDraDriver;
  item(fmt::format(
      "{{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"DeviceClass\",\"metadata\":{{\"name\":\"{0}\"}},"
      "\"spec\":{{\"selectors\":[{{\"cel\":{{\"expression\":\"device.driver == '{0}' && "
      "device.attributes['{0}'].type == 'hami-gpu'\"}}}}]}}}}",
      driver));
  for (const auto& n : snap.nodes) {
    item(
        fmt::format("{{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{{\"name\":\"{}\",\"labels\":{{"
                    "\"kubernetes.io/hostname\":\"{}\"}}}},\"status\":{{\"allocatable\":{{\"cpu\":\"{}m\","
                    "\"memory\":\"{}Mi\",\"pods\":\"110\"}}}}}}",
                    n.name, n.name, n.capacity.cpu_milli, n.capacity.memory_mib));
    std::string devices;
    for (size_t i = 0; i < n.devices.size(); ++i) {
      const auto& d = n.devices[i];
      devices += fmt::format(
          "{}{{\"name\":\"hami-gpu-{}\",\"allowMultipleAllocations\":true,\"attributes\":{{\"type\":{{"
          "\"string\":"
          "\"hami-gpu\"}},\"uuid\":{{\"string\":\"{}\"}},\"productName\":{{\"string\":\"{}\"}},\"index\":{{"
          "\"int\":{}"
          "}},\"driverVersion\":{{\"version\":\"550.144.3\"}}}},\"capacity\":{{\"cores\":{{\"value\":\"{}\","
          "\"requestPolicy\":{{\"default\":\"{}\",\"validRange\":{{\"min\":\"0\",\"max\":\"{}\",\"step\":"
          "\"1\"}}}}}},"
          "\"memory\":{{\"value\":\"{}\",\"requestPolicy\":{{\"default\":\"{}\",\"validRange\":{{\"min\":"
          "\"1Mi\","
          "\"step\":\"1Mi\"}}}}}}}}}}",
          i ? "," : "", i, d.uuid, d.type, i, d.cores, d.cores, d.cores, quantity_bytes_mi(d.memory_mib),
          quantity_bytes_mi(d.memory_mib));
    }
    item(fmt::format(
        "{{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{{\"name\":"
        "\"{0}-{1}\"}},\"spec\":{{\"driver\":\"{1}\",\"nodeName\":\"{0}\",\"pool\":{{\"name\":\"{0}\","
        "\"generation\":1,\"resourceSliceCount\":1}},\"devices\":[{2}]}}}}",
        n.name, driver, devices));
  }
  size_t k = 0;
  for (const auto& p : snap.starting) {
    const auto& n = snap.nodes[p.node];
    std::string results, requests;
    size_t devices = 0;
    int64_t memory_mib = 0, cores = 0;
    for (const auto& grants : p.allocation.containers)
      for (const auto& g : grants) {
        results += fmt::format(
            "{}{{\"request\":\"gpu\",\"driver\":\"{}\",\"pool\":\"{}\",\"device\":\"hami-gpu-{}\","
            "\"shareID\":"
            "\"00000000-0000-0000-0000-{:012}\",\"consumedCapacity\":{{\"cores\":\"{}\",\"memory\":\"{}\"}}}"
            "}",
            devices ? "," : "", driver, n.name, g.device, k, g.cores, quantity_bytes_mi(g.memory_mib));
        memory_mib = g.memory_mib;
        cores = g.cores;
        ++devices;
      }
    const std::string name = fmt::format("pod-{}", k++);
    if (devices) {
      item(fmt::format(
          "{{\"apiVersion\":\"resource.k8s.io/"
          "v1\",\"kind\":\"ResourceClaim\",\"metadata\":{{\"name\":\"{0}-gpu\","
          "\"namespace\":\"default\"}},\"spec\":{{\"devices\":{{\"requests\":[{{\"name\":\"gpu\",\"exactly\":"
          "{{\"deviceClassName\":\"{1}\",\"count\":{4},\"capacity\":{{\"requests\":{{\"memory\":\"{5}\","
          "\"cores\":\"{6}\"}}}}}}}}]}}}},\"status\":{{\"allocation\":{{\"devices\":{{"
          "\"results\":["
          "{2}]}},\"nodeSelector\":{{\"nodeSelectorTerms\":[{{\"matchFields\":[{{\"key\":\"metadata.name\","
          "\"operator\":\"In\",\"values\":[\"{3}\"]}}]}}]}}}}}}}}",
          name, driver, results, n.name, devices, quantity_bytes_mi(memory_mib), cores));
      requests =
          fmt::format(",\"resourceClaims\":[{{\"name\":\"gpu\",\"resourceClaimName\":\"{}-gpu\"}}]", name);
    }
    item(fmt::format(
        "{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{\"name\":\"{}\",\"namespace\":\"default\"}},"
        "\"spec\":{{\"nodeName\":\"{}\",\"containers\":[{{\"name\":\"main\",\"resources\":{{\"requests\":{{"
        "\"cpu\":\"{}m\",\"memory\":\"{}Mi\"}}}}}}]{}}},\"status\":{{\"phase\":\"Running\"}}}}",
        name, n.name, p.request.host.cpu_milli, p.request.host.memory_mib, requests));
  }
  // The queue: a claim as HAMi-DRA's webhook writes it per pending pod, not allocated.
  for (size_t q = 0; q < snap.queue.size(); ++q) {
    const auto& r = snap.queue[q].request;
    const auto* c = r.first_device_container();
    const std::string name = fmt::format("pending-{}", q);
    item(fmt::format(
        "{{\"apiVersion\":\"resource.k8s.io/"
        "v1\",\"kind\":\"ResourceClaim\",\"metadata\":{{\"name\":\"{0}-gpu\","
        "\"namespace\":\"default\"}},\"spec\":{{\"devices\":{{\"requests\":[{{\"name\":\"gpu\",\"exactly\":{{"
        "\"deviceClassName\":\"{1}\",\"count\":{2},\"capacity\":{{\"requests\":{{\"memory\":\"{3}\","
        "\"cores\":\"{4}\"}}}}}}}}]}}}}}}",
        name, driver, c->count, quantity_bytes_mi(c->memory_mib), c->cores));
    item(fmt::format(
        "{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{\"name\":\"{0}\",\"namespace\":\"default\","
        "\"creationTimestamp\":\"2026-11-28T10:{1:02}:{2:02}Z\"}},\"spec\":{{\"containers\":[{{\"name\":"
        "\"main\","
        "\"resources\":{{\"requests\":{{\"cpu\":\"{3}m\",\"memory\":\"{4}Mi\"}}}}}}],\"resourceClaims\":[{{"
        "\"name\":\"gpu\",\"resourceClaimName\":\"{0}-gpu\"}}]}},\"status\":{{\"phase\":\"Pending\"}}}}",
        name, q / 60 % 60, q % 60, r.host.cpu_milli, r.host.memory_mib));
  }
  fmt::print(out, "\n]}}\n");
  std::fclose(out);
}

// The same fleet and pods as write_dra_dump, with HAMi's registration,
// allocation annotations and resource limits instead of DRA's objects.
void write_hami_lean_dump(const sim::ClusterSnapshot& snap, const std::string& path) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  fmt::print(out, "{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n");
  bool first = true;
  auto item = [&](const std::string& json) {
    fmt::print(out, "{}{}", first ? "" : ",\n", json);
    first = false;
  };
  auto quoted = [](const std::string& text) { return nlohmann::json(text).dump(); };
  for (const auto& n : snap.nodes)
    item(fmt::format(
        "{{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{{\"name\":\"{}\",\"labels\":{{"
        "\"kubernetes.io/hostname\":\"{}\"}},\"annotations\":{{\"hami.io/node-nvidia-register\":{}}}}},"
        "\"status\":{{\"allocatable\":{{\"cpu\":\"{}m\",\"memory\":\"{}Mi\",\"pods\":\"110\"}}}}}}",
        n.name, n.name, quoted(core::codec::encode_registration_json(n.devices)), n.capacity.cpu_milli,
        n.capacity.memory_mib));
  auto limits = [](const core::PodRequest& r) {
    const auto* c = r.first_device_container();
    if (!c) return std::string();
    return fmt::format(
        ",\"limits\":{{\"nvidia.com/gpu\":\"{}\",\"nvidia.com/gpumem\":\"{}\",\"nvidia.com/"
        "gpucores\":\"{}\"}}",
        c->count, c->memory_mib, c->cores);
  };
  size_t k = 0;
  for (const auto& p : snap.starting) {
    const auto& n = snap.nodes[p.node];
    const std::string name = fmt::format("pod-{}", k++);
    const std::string allocation =
        p.allocation.empty() ? "" : core::codec::encode_allocation(p.allocation, n);
    const std::string annotations =
        allocation.empty()
            ? ""
            : fmt::format(
                  ",\"annotations\":{{\"hami.io/bind-phase\":\"success\",\"hami.io/vgpu-node\":"
                  "\"{}\",\"hami.io/vgpu-devices-allocated\":{}}}",
                  n.name, quoted(allocation));
    item(fmt::format(
        "{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{\"name\":\"{}\",\"namespace\":\"default\"{}}"
        "},"
        "\"spec\":{{\"nodeName\":\"{}\",\"containers\":[{{\"name\":\"main\",\"resources\":{{\"requests\":{{"
        "\"cpu\":\"{}m\",\"memory\":\"{}Mi\"}}{}}}}}]}},\"status\":{{\"phase\":\"Running\"}}}}",
        name, annotations, n.name, p.request.host.cpu_milli, p.request.host.memory_mib, limits(p.request)));
  }
  for (size_t q = 0; q < snap.queue.size(); ++q) {
    const auto& r = snap.queue[q].request;
    item(
        fmt::format("{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{\"name\":\"pending-{}\","
                    "\"namespace\":\"default\","
                    "\"creationTimestamp\":\"2026-11-28T10:{:02}:{:02}Z\"}},\"spec\":{{\"containers\":[{{"
                    "\"name\":\"main\","
                    "\"resources\":{{\"requests\":{{\"cpu\":\"{}m\",\"memory\":\"{}Mi\"}}{}}}}}]}},"
                    "\"status\":{{\"phase\":"
                    "\"Pending\"}}}}",
                    q, q / 60 % 60, q % 60, r.host.cpu_milli, r.host.memory_mib, limits(r)));
  }
  fmt::print(out, "\n]}}\n");
  std::fclose(out);
}

struct DraModel {
  std::vector<std::vector<core::dra::Pool>> pools;
  core::dra::AllocatedState state;
};

DraModel read_dra_model(const std::string& path) {
  core::dra::DraDump dump = core::dra::read_dra_dump(core::codec::KubeText::from_file(path));
  DraModel model;
  std::unordered_map<std::string, std::vector<const core::dra::ResourceSlice*>> by_node;
  std::vector<const core::dra::ResourceSlice*> everywhere;
  for (const auto& s : dump.objects.slices)
    (s.node_name.empty() ? everywhere : by_node[s.node_name]).push_back(&s);
  for (const auto& n : dump.nodes) {
    core::dra::NodeInfo info{n.header.meta.name.text, {}};
    for (const auto& e : n.header.meta.labels.entries) info.labels.emplace_back(e.key, e.value.text);
    auto candidates = by_node[info.name];
    candidates.insert(candidates.end(), everywhere.begin(), everywhere.end());
    model.pools.push_back(core::dra::gather_pools(candidates, info));
  }
  for (const auto& c : dump.objects.claims)
    if (c.allocation) model.state.add(*c.allocation);
  return model;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 4000;
  std::string dir = "/tmp/gpuslice-dra-bench";
  bool write_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--write-only") write_only = true;
    if (flag == "--nodes" && i + 1 < argc) nodes = std::stoi(argv[++i]);
    if (flag == "--dir" && i + 1 < argc) dir = argv[++i];
  }
  std::filesystem::create_directories(dir);
  const std::string hami = dir + "/hami.json", dra = dir + "/dra.json";
  bench::DumpShape shape;
  shape.nodes = nodes;
  std::FILE* f = std::fopen(hami.c_str(), "w");
  bench::write_kubectl_json(shape, f);
  std::fclose(f);
  const sim::ClusterSnapshot snapshot = sim::load_snapshot(hami);
  write_dra_dump(snapshot, dra);
  if (write_only) {
    write_hami_lean_dump(snapshot, dir + "/hami-lean.json");
    fmt::print("wrote {} and {}: {} nodes, {} running pods, {} pending\n", dir + "/hami-lean.json", dra,
               snapshot.nodes.size(), snapshot.starting.size(), snapshot.queue.size());
    return 0;
  }
  std::vector<double> hami_s, dra_s;
  size_t gpus = 0, held = 0;
  for (int r = 0; r < 5; ++r) {
    auto t = std::chrono::steady_clock::now();
    const auto s = sim::load_snapshot(hami);
    hami_s.push_back(seconds(t));
    t = std::chrono::steady_clock::now();
    const DraModel m = read_dra_model(dra);
    dra_s.push_back(seconds(t));
    gpus = 0;
    for (const auto& pools : m.pools)
      for (const auto& p : pools)
        for (const auto& slice : p.slices) gpus += slice.size();
    held = m.state.capacity.size();
    (void)s;
  }
  fmt::print("nodes {}, GPUs {} (DRA devices {}), running pods {}, devices holding claims {}\n",
             snapshot.nodes.size(), snapshot.nodes.size() * 8, gpus, snapshot.starting.size(), held);
  fmt::print("HAMi dump ({} MiB) read into the fleet: median {:.3f} s\n",
             std::filesystem::file_size(hami) >> 20, median(hami_s));
  fmt::print("DRA dump ({} MiB) read into the allocator's model: median {:.3f} s\n",
             std::filesystem::file_size(dra) >> 20, median(dra_s));
  fmt::print("ratio DRA / HAMi: {:.2f}\n", median(dra_s) / median(hami_s));
  return 0;
}

// kube_dump: writes the benchmark's generated HAMi cluster (kube_dump.hpp).
//   kube_dump [--nodes N] [--seed S] [--json FILE] [--compact-json FILE] [--yaml FILE] [--api-dir DIR]
#include <fmt/format.h>

#include <cstring>
#include <string>

#include "kube_dump.hpp"

int main(int argc, char** argv) {
  gpuslice::bench::DumpShape shape;
  std::string json_path, compact_path, yaml_path, api_dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--nodes")
      shape.nodes = std::stoi(argv[i + 1]);
    else if (flag == "--seed")
      shape.seed = std::stoull(argv[i + 1]);
    else if (flag == "--json")
      json_path = argv[i + 1];
    else if (flag == "--compact-json")
      compact_path = argv[i + 1];
    else if (flag == "--yaml")
      yaml_path = argv[i + 1];
    else if (flag == "--api-dir")
      api_dir = argv[i + 1];
    else {
      fmt::print(stderr, "kube_dump: unknown flag {}\n", flag);
      return 2;
    }
  }
  auto report = [](const std::string& what, const gpuslice::bench::DumpCounts& c) {
    fmt::print("{}: {} nodes, {} pods ({} GPU pods running, {} daemon, {} pending), {:.1f} MB\n", what,
               c.nodes, c.pods(), c.gpu_pods, c.daemon_pods, c.pending_pods,
               static_cast<double>(c.bytes) / 1e6);
  };
  auto to_file = [&](const std::string& path, auto write) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path);
    const auto counts = write(f);
    std::fclose(f);
    report(path, counts);
  };
  if (!json_path.empty())
    to_file(json_path, [&](std::FILE* f) { return gpuslice::bench::write_kubectl_json(shape, f); });
  if (!compact_path.empty())
    to_file(compact_path, [&](std::FILE* f) { return gpuslice::bench::write_kubectl_json(shape, f, true); });
  if (!yaml_path.empty())
    to_file(yaml_path, [&](std::FILE* f) { return gpuslice::bench::write_kubectl_yaml(shape, f); });
  if (!api_dir.empty()) report(api_dir, gpuslice::bench::write_api_lists(shape, api_dir));
  return 0;
}

// The monitor's /metrics against HAMi's names, help texts and label sets
// (tests/monitor/data/hami_metrics.txt, typed from HAMi's metrics.go), and
// the numbers as client_golang writes them.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "gpuslice/monitor/node_metrics.hpp"
#include "gpuslice/serve/prometheus_text.hpp"

using namespace gpuslice::monitor;

namespace {

struct Golden {
  std::string help;
  std::set<std::string> labels;
  bool legacy = false;
};

std::map<std::string, Golden> golden() {
  std::ifstream in(std::string(GPUSLICE_MONITOR_TEST_DATA) + "/hami_metrics.txt");
  REQUIRE(in);
  std::map<std::string, Golden> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream ss(line);
    std::string name, help, labels;
    std::getline(ss, name, '|');
    std::getline(ss, help, '|');
    std::getline(ss, labels, '|');
    Golden g{help, {}, name.rfind("legacy:", 0) == 0};
    if (g.legacy) name = name.substr(7);
    std::stringstream ls(labels);
    for (std::string l; std::getline(ls, l, ',');) g.labels.insert(l);
    out[name] = g;
  }
  return out;
}

// name -> (help, every label-name set its samples carry)
struct Parsed {
  std::map<std::string, std::string> help, type;
  std::map<std::string, std::set<std::set<std::string>>> label_sets;
  std::map<std::string, int> samples;
};

Parsed parse(const std::string& text) {
  Parsed p;
  std::istringstream in(text);
  const std::regex sample(R"(^([A-Za-z_:][A-Za-z0-9_:]*)\{(.*)\} (\S+)$)");
  const std::regex label(R"(([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)\")");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      const auto sp = line.find(' ', 7);
      p.help[line.substr(7, sp - 7)] = line.substr(sp + 1);
    } else if (line.rfind("# TYPE ", 0) == 0) {
      const auto sp = line.find(' ', 7);
      p.type[line.substr(7, sp - 7)] = line.substr(sp + 1);
    } else {
      std::smatch m;
      REQUIRE(std::regex_match(line, m, sample));
      std::set<std::string> names;
      const std::string labels = m[2];
      for (auto it = std::sregex_iterator(labels.begin(), labels.end(), label); it != std::sregex_iterator();
           ++it)
        names.insert((*it)[1]);
      p.label_sets[m[1]].insert(names);
      ++p.samples[m[1]];
    }
  }
  return p;
}

std::vector<HostGpu> two_gpus() {
  HostGpu a{0, "GPU-aaaaaaaa-0000-0000-0000-000000000001", "Tesla T4", true, 3ULL << 30, true, 42, 7};
  HostGpu b{1, "GPU-aaaaaaaa-0000-0000-0000-000000000002", "Tesla T4", true, 0, true, 0, 0};
  return {a, b};
}

std::vector<ContainerView> one_container() {
  ContainerView c{"serving", "vllm-0", "server", {}, 1'700'000'000};
  c.devices.push_back(
      {0, "GPU-aaaaaaaa-0000-0000-0000-000000000001", 1388314624, 3145728000, 314572800, 0, 1073741824, 30});
  return {c};
}

}  // namespace

TEST_CASE("every metric HAMi's monitor exports, with its help text and labels") {
  const auto want = golden();
  for (bool legacy : {false, true}) {
    INFO("legacy " << legacy);
    const Parsed p = parse(render_metrics("gpu-1", two_gpus(), one_container(), 1'700'000'042, legacy));
    for (const auto& [name, g] : want) {
      INFO(name);
      if (g.legacy && !legacy) {
        CHECK(p.help.count(name) == 0);
        continue;
      }
      REQUIRE(p.help.count(name) == 1);
      CHECK(p.help.at(name) == g.help);
      CHECK(p.type.at(name) == "gauge");
      REQUIRE(p.label_sets.at(name).size() == 1);
      CHECK(*p.label_sets.at(name).begin() == g.labels);
    }
    // Nothing beyond HAMi's names.
    for (const auto& [name, help] : p.help) CHECK(want.count(name) == 1);
  }
}

TEST_CASE("the values and label values HAMi derives") {
  const std::string text = render_metrics("gpu-1", two_gpus(), one_container(), 1'700'000'042, true);
  CHECK(text.find("hami_host_gpu_memory_used_bytes{device_index=\"0\",device_type=\"NVIDIA-Tesla T4\","
                  "device_uuid=\"GPU-aaaaaaaa-0000-0000-0000-000000000001\",node=\"gpu-1\",zone=\"vGPU\"} "
                  "3.221225472e+09\n") != std::string::npos);
  CHECK(text.find("hami_host_gpu_utilization_ratio{device_index=\"1\"") != std::string::npos);
  CHECK(text.find(
            "hami_host_gpu_memory_controller_utilization_ratio{device_index=\"0\",device_type=\"NVIDIA-Tesla "
            "T4\",device_uuid=\"GPU-aaaaaaaa-0000-0000-0000-000000000001\",zone=\"vGPU\"} 7\n") !=
        std::string::npos);
  const std::string ctr =
      "{container=\"server\",device_uuid=\"GPU-aaaaaaaa-0000-0000-0000-000000000001\",namespace=\"serving\","
      "pod=\"vllm-0\",vdevice_index=\"0\",zone=\"vGPU\"}";
  CHECK(text.find("hami_vgpu_memory_used_bytes" + ctr + " 1.388314624e+09\n") != std::string::npos);
  CHECK(text.find("hami_vgpu_memory_limit_bytes" + ctr + " 3.145728e+09\n") != std::string::npos);
  CHECK(text.find("hami_container_device_utilization_ratio" + ctr + " 30\n") != std::string::npos);
  CHECK(text.find("hami_container_last_kernel_elapsed_seconds" + ctr + " 42\n") != std::string::npos);
  CHECK(text.find("hami_vgpu_memory_context_bytes" + ctr + " 3.145728e+08\n") != std::string::npos);
  CHECK(text.find("hami_vgpu_memory_module_bytes" + ctr + " 0\n") != std::string::npos);
  CHECK(text.find(
            "Device_memory_desc_of_container{context=\"314572800\",ctrname=\"server\",data=\"1073741824\","
            "deviceuuid=\"GPU-aaaaaaaa-0000-0000-0000-000000000001\",module=\"0\",offset=\"0\","
            "podname=\"vllm-0\",podnamespace=\"serving\",vdeviceid=\"0\",zone=\"vGPU\"} 1.388314624e+09\n") !=
        std::string::npos);
  // A container that never launched has no last-kernel sample (HAMi skips 0).
  auto idle = one_container();
  idle[0].last_kernel_time = 0;
  CHECK(render_metrics("gpu-1", {}, idle, 5, false).find("last_kernel") == std::string::npos);
}

TEST_CASE("numbers as Go's strconv 'g' writes them (client_golang's text format)") {
  using gpuslice::serve::prometheus_number;
  CHECK(prometheus_number(0) == "0");
  CHECK(prometheus_number(1) == "1");
  CHECK(prometheus_number(30) == "30");
  CHECK(prometheus_number(100000) == "100000");
  CHECK(prometheus_number(999999) == "999999");
  CHECK(prometheus_number(1e6) == "1e+06");
  CHECK(prometheus_number(1234567) == "1.234567e+06");
  CHECK(prometheus_number(1073741824) == "1.073741824e+09");
  CHECK(prometheus_number(0.5) == "0.5");
  CHECK(prometheus_number(0.0001) == "0.0001");
  CHECK(prometheus_number(0.00001) == "1e-05");
  CHECK(prometheus_number(-2.5) == "-2.5");
  CHECK(prometheus_number(123.456) == "123.456");
  CHECK(prometheus_number(1.8446744073709552e19) == "1.8446744073709552e+19");
}

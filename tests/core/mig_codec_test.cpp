// HAMi v2.10's MIG wire formats: migProfiles in hami.io/node-nvidia-register
// and hami.io/vgpu-mig-allocations. Cases name the HAMi test they reproduce.
#include <catch2/catch.hpp>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/codec/text_file.hpp"
#include "gpuslice/core/dialects/hami/device_config.hpp"
#include "gpuslice/core/dialects/hami/mig_allocations.hpp"
#include "gpuslice/core/dialects/hami/mig_registration.hpp"
#include "gpuslice/core/dialects/hami/registration.hpp"
#include "gpuslice/core/errors.hpp"
#include "gpuslice/core/mig.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::codec;

namespace {
std::string card_with_profiles(const std::string& profiles) {
  return R"([{"id":"GPU-0","count":7,"devmem":40960,"devcore":100,"type":"NVIDIA-A100-SXM4-40GB","health":true,"mode":"mig","migProfiles":)" +
         profiles + "}]";
}
}  // namespace

TEST_CASE("device_test.go TestGetNodeDevices_MigProfilesFromNode: migProfiles decode, unknown keys ignored",
          "[mig][registration]") {
  const auto devices = decode_registration(
      R"([{"id":"GPU-0","count":7,"devmem":40960,"devcore":100,"type":"NVIDIA-A100-SXM4-40GB","numa":0,"health":true,"mode":"mig","migProfiles":[{"name":"1g.5gb","memoryMB":5120,"core":14,"sliceCount":1,"instanceCount":7,"multiprocessorCount":14,"placements":[{"start":6,"size":1}]}]}])");
  REQUIRE(devices.size() == 1);
  CHECK(devices[0].is_mig());
  REQUIRE(devices[0].mig_profiles.size() == 1);
  const MigProfile& p = devices[0].mig_profiles[0];
  CHECK(p.name == "1g.5gb");
  CHECK(p.memory_mib == 5120);
  CHECK(p.cores == 14);
  CHECK(p.slice_count == 1);
  CHECK(p.placements == std::vector<MigPlacement>{{6, 1}});
}

TEST_CASE("devices_test.go TestMigProfileUsesCompactWireFormat: migProfiles encode as HAMi writes them",
          "[mig][registration]") {
  Device d;
  d.uuid = "GPU-0";
  d.slots = 7;
  d.memory_mib = 40960;
  d.cores = 100;
  d.type = "NVIDIA-A100-SXM4-40GB";
  d.mode = "mig";
  d.healthy = true;
  d.mig_profiles = {{"1g.5gb", 4864, 15, 1, {{6, 1}}}};
  const std::string text = encode_registration_json({d});
  CHECK(
      text ==
      R"([{"id":"GPU-0","count":7,"devmem":40960,"devcore":100,"type":"NVIDIA-A100-SXM4-40GB","mode":"mig","migProfiles":[{"name":"1g.5gb","memoryMB":4864,"core":15,"sliceCount":1,"placements":[{"start":6,"size":1}]}],"health":true}])");
  CHECK(decode_registration(text).at(0).mig_profiles == d.mig_profiles);
  // No omitempty on a profile's fields: zeros and no placements are written.
  d.mig_profiles = {{"1g.5gb", 4864, 0, 0, {}}};
  CHECK(encode_registration_json({d}).find(
            R"({"name":"1g.5gb","memoryMB":4864,"core":0,"sliceCount":0,"placements":null})") !=
        std::string::npos);
  // A card without profiles writes none.
  d.mig_profiles.clear();
  CHECK(encode_registration_json({d}).find("migProfiles") == std::string::npos);
}

TEST_CASE("a MIG registration NVML could not have made is refused, naming the field", "[mig][registration]") {
  auto refuses = [](const std::string& profiles, const std::string& words) {
    INFO(profiles);
    CHECK_THROWS_WITH(decode_registration(card_with_profiles(profiles)), Catch::Contains(words));
  };
  refuses(
      R"([{"name":"3g.20gb","memoryMB":20480,"core":42,"sliceCount":3,"placements":[{"start":0,"size":4},{"start":2,"size":4}]}])",
      "device 'GPU-0': migProfiles[0].placements[1] (start 2, size 4) overlaps placements[0] (start 0, size "
      "4)");
  refuses(
      R"([{"name":"3g.20gb","memoryMB":20480,"core":42,"sliceCount":3,"placements":[{"start":6,"size":4}]}])",
      "migProfiles[0].placements[0] (start 6, size 4) exceeds the card's 8 memory slices");
  refuses(
      R"([{"name":"1g.5gb","memoryMB":5120,"core":14,"sliceCount":1,"placements":[{"start":1,"size":0}]}])",
      "migProfiles[0].placements[0]: field 'size' must not be 0");
  refuses(
      R"([{"name":"7g.80gb","memoryMB":81920,"core":100,"sliceCount":7,"placements":[{"start":0,"size":8}]}])",
      "migProfiles[0] ('7g.80gb'): memoryMB 81920 exceeds the card's devmem 40960");
  refuses(R"([{"memoryMB":5120}])", "migProfiles[0]: field 'name' must not be empty");
  refuses(R"([{"name":"1g.5gb","memoryMB":"5120"}])", "migProfiles[0]: field 'memoryMB' must be an integer");
  refuses(R"([{"name":"1g.5gb","placements":[{"start":-1,"size":1}]}])",
          "migProfiles[0].placements[0]: field 'start' out of range");
  refuses(R"({"name":"1g.5gb"})", "field 'migProfiles' must be an array");
  // Null placements are none (Go's decoder), and such a card is valid.
  CHECK(decode_registration(card_with_profiles(R"([{"name":"1g.5gb","memoryMB":5120,"placements":null}])"))
            .at(0)
            .mig_profiles.at(0)
            .placements.empty());
}

TEST_CASE(
    "mig_topology_test.go TestSelectMigPlacementUsesBalancedPacking: 3g at 4, 2g at 0, 1g at 3, 1g at 2",
    "[mig][placement]") {
  const std::vector<MigProfile> a100 = {
      {"1g.5gb", 5120, 14, 1, {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}},
      {"2g.10gb", 10240, 28, 2, {{0, 2}, {2, 2}, {4, 2}}},
      {"3g.20gb", 20480, 42, 3, {{0, 4}, {4, 4}}}};
  uint32_t taken = 0;
  for (const auto& [memory, profile, start] : std::vector<std::tuple<int64_t, int32_t, uint32_t>>{
           {20000, 2, 4}, {9500, 1, 0}, {4500, 0, 3}, {4500, 0, 2}}) {
    const auto choice = select_mig_candidate(a100, taken, memory);
    REQUIRE(choice);
    CHECK(choice->profile == profile);
    CHECK(choice->placement.start == start);
    taken |= mig_placement_mask(choice->placement);
  }
  // The smallest profile with a free placement: 1g slices all taken, a 2g is used.
  CHECK(select_mig_candidate(a100, 0b0111'1111u & ~0b0011'0000u, 1000)->profile == 0);
  CHECK(select_mig_candidate(a100, 0b0100'1111u, 1000)->placement == MigPlacement{5, 1});
  CHECK(!select_mig_candidate(a100, 0b0111'1111u, 1000));
  // Past the largest profile: none.
  CHECK(!select_mig_candidate(a100, 0, 30000));
}

TEST_CASE("mig_profiles_test.go TestEncodeDecodeMigAllocations: a grant's reservation round-trips",
          "[mig][annotation]") {
  Node node;
  node.name = "node1";
  Device d;
  d.uuid = "GPU-a";
  d.mode = "mig";
  d.mig_profiles = {{"1g.5gb", 5120, 14, 1, {{6, 1}}}};
  node.devices = {d};
  PodAllocation a;
  DeviceGrant g{0, 5120, 14};
  g.mig_profile = 0;
  g.mig_placement = {6, 1};
  a.containers = {{g}};
  const std::string text = encode_mig_allocations(a, node);
  CHECK(
      text ==
      R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":6,"size":1}}])");
  const auto back = decode_mig_allocations(text);
  REQUIRE(back.size() == 1);
  CHECK(back[0].container_index == 0);
  CHECK(back[0].device_index == 0);
  CHECK(back[0].gpu_uuid == "GPU-a");
  CHECK(back[0].profile == "1g.5gb");
  CHECK(back[0].placement == MigPlacement{6, 1});
  // A pod without MIG grants writes no annotation.
  a.containers = {{DeviceGrant{0, 5120, 14}}};
  CHECK(encode_mig_allocations(a, node).empty());
}

TEST_CASE("mig_profiles_test.go: the decoder's refusals and runtime identity", "[mig][annotation]") {
  SECTION("TestDecodeMigAllocationsRejectsDuplicateDeviceIndex") {
    CHECK_THROWS_WITH(
        decode_mig_allocations(
            R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":6,"size":1}},{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":5,"size":1}}])"),
        "duplicate MIG allocation for container 0 device 0");
  }
  SECTION("TestDecodeMigAllocationsPreservesZeroRuntimeInstanceIDs") {
    const auto r = decode_mig_allocations(
        R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":6,"size":1},"migUUID":"MIG-a","gpuInstanceID":4,"computeInstanceID":0}])");
    REQUIRE(r.size() == 1);
    CHECK(r[0].mig_uuid == "MIG-a");
    CHECK(r[0].gpu_instance_id == std::optional<uint32_t>(4));
    CHECK(r[0].compute_instance_id == std::optional<uint32_t>(0));
  }
  SECTION("TestDecodeMigAllocationsRejectsPartialRuntimeIdentity") {
    CHECK_THROWS_WITH(
        decode_mig_allocations(
            R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":6,"size":1},"migUUID":"MIG-a"}])"),
        "MIG allocation 0 has partial runtime identity");
  }
  SECTION("an entry without a placement size, UUID or profile is incomplete") {
    CHECK_THROWS_WITH(
        decode_mig_allocations(R"([{"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":6}}])"),
        "MIG allocation 0 is incomplete");
    CHECK_THROWS_WITH(decode_mig_allocations(R"([{"profile":"1g.5gb","placement":{"start":6,"size":1}}])"),
                      "MIG allocation 0 is incomplete");
    CHECK_THROWS_WITH(
        decode_mig_allocations(
            R"([{"containerIndex":-1,"gpuUUID":"GPU-a","profile":"1g.5gb","placement":{"start":6,"size":1}}])"),
        "MIG allocation 0 is incomplete");
  }
  SECTION("not JSON, not a list") {
    CHECK_THROWS_WITH(decode_mig_allocations("[{"), Catch::Contains("not valid JSON"));
    CHECK_THROWS_WITH(decode_mig_allocations(R"({"a":1})"), "MIG allocations must be a JSON array");
    CHECK(decode_mig_allocations("").empty());
    CHECK(decode_mig_allocations("null").empty());
  }
}

TEST_CASE("device config: the chart's default, HAMi's validation and the allowlist's first-match rule",
          "[mig][device-config]") {
  using gpuslice::core::InputError;
  const DeviceConfig chart = chart_default_device_config();
  // The request defaults gpuslice uses without a file are the chart's.
  const RequestDefaults plain;
  CHECK(chart.requests.resource_count == plain.resource_count);
  CHECK(chart.requests.resource_memory == plain.resource_memory);
  CHECK(chart.requests.default_memory_mib == 0);
  CHECK(chart.requests.default_gpu_num == 1);
  CHECK(chart.plugin.split_count == 10);
  REQUIRE(chart.mig_profile_allowlist.size() == 9);
  // First entry whose model is a substring of the card type wins: "H20" precedes the H200 row.
  const auto* h200 = mig_allowlist_entry(chart, "NVIDIA H200 NVL");
  REQUIRE(h200);
  CHECK(h200->profiles == std::vector<std::string>{"1g.12gb", "2g.24gb", "3g.48gb", "7g.96gb"});
  CHECK(mig_allowlist_entry(chart, "NVIDIA-A100-SXM4-40GB")->profiles.at(3) == "7g.40gb");
  CHECK(mig_allowlist_entry(chart, "NVIDIA-Tesla T4") == nullptr);

  const std::string chart_block = R"(nvidia:
  resourceCountName: nvidia.com/gpu
  resourceMemoryName: nvidia.com/gpumem
  resourceMemoryPercentageName: nvidia.com/gpumem-percentage
  resourceCoreName: nvidia.com/gpucores
  resourcePriorityName: nvidia.com/priority
  overwriteEnv: false
  defaultMemory: 0
  defaultCores: 0
  defaultGPUNum: 1
  memoryFactor: 1
  deviceSplitCount: 10
  deviceMemoryScaling: 1
  deviceCoreScaling: 1
  knownMigGeometries: []
  migProfileAllowlist:
  - models: [ "A100-SXM4-40GB", "A100-40GB-PCIe", "A100-PCIE-40GB"]
    profiles: [ "1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb" ]
cambricon:
  resourceCountName: cambricon.com/vmlu
)";
  const DeviceConfig read = parse_device_config(chart_block, "device-config.yaml");
  CHECK(read.requests.resource_count == "nvidia.com/gpu");
  CHECK(read.requests.resource_priority == "nvidia.com/priority");
  CHECK(read.plugin.split_count == 10);
  CHECK(read.mig_profile_allowlist == std::vector<MigAllowlistEntry>{chart.mig_profile_allowlist[1]});

  // mig_profiles_test.go TestValidateMigProfileAllowlist: an entry without profiles is refused.
  auto refuses = [](const std::string& text, const std::string& words) {
    INFO(text);
    CHECK_THROWS_WITH(parse_device_config(text, "dc.yaml"), Catch::Contains(words));
  };
  refuses("nvidia:\n  migProfileAllowlist:\n  - models: [A100]\n",
          "dc.yaml:3: nvidia.migProfileAllowlist[0]: MIG profile allowlist must define models and profiles");
  refuses("nvidia:\n  migProfileAllowlist:\n  - models: [A100]\n    profiles: [1g.5gb, g.5gb]\n",
          "dc.yaml:4: nvidia.migProfileAllowlist[0].profiles[1]: invalid MIG profile \"g.5gb\"");
  refuses("nvidia:\n  migProfileAllowlist:\n  - models: [A100]\n    profiles: [x.5gb]\n",
          "invalid MIG profile \"x.5gb\"");
  refuses("nvidia:\n  defaultMemory: lots\n",
          "dc.yaml:2: nvidia.defaultMemory: 'lots' is not of the field's type");
  refuses("nvidia: {}\ncambricon: {}\n", "all configurations are empty");
  refuses("nvidia:\n  memoryFactor: 2\n", "nvidia.memoryFactor: 2: gpuslice models memoryFactor 1 only");
  // HAMi's validation passes "9g.99gb" (discovery then skips it).
  CHECK(parse_device_config("nvidia:\n  migProfileAllowlist:\n  - models: [A100]\n    profiles: [9g.99gb]\n",
                            "dc.yaml")
            .mig_profile_allowlist.size() == 1);
}

// register.go discoverMigProfiles, worked by hand: names from the first
// allowlist entry naming a substring of the card type, in its order; facts
// from the N-slice instance profile of each name's "<N>g" key; core =
// ceil(multiprocessors x 100 / the largest); count = the most instances.
TEST_CASE("discoverMigProfiles: a MIG card's registration from NVML facts and the allowlist",
          "[mig][registration]") {
  const auto* h100 = known_mig_facts("H100-SXM5-80GB");
  REQUIRE(h100);
  CHECK(known_mig_facts("NVIDIA H100 80GB HBM3") == h100);
  CHECK(known_mig_facts("Tesla T4") == nullptr);

  SECTION("the chart's H100-SXM5-80GB row gives what examples/mig/h100-mig-node.yaml registers") {
    const MigRegistration reg =
        discover_mig_profiles("NVIDIA-H100-SXM5-80GB", *h100, chart_default_device_config());
    CHECK(reg.count == 7);
    // 16, 32, 60, 132 SMs of 132: 13, 25, 46, 100.
    const auto example = parse_nodes(
        read_text_file(GPUSLICE_TEST_DATA "/../../../examples/mig/h100-mig-node.yaml"), "h100-mig-node.yaml");
    REQUIRE(example.size() == 1);
    CHECK(reg.profiles == example[0].node.devices.at(0).mig_profiles);
    CHECK(reg.count == example[0].node.devices.at(0).slots);
  }
  SECTION("NVML's own name for the card matches no chart row: no profiles, and HAMi registers no card") {
    CHECK(discover_mig_profiles("NVIDIA H100 80GB HBM3", *h100, chart_default_device_config())
              .profiles.empty());
  }
  SECTION("allowlist order; an unknown key skipped; a +me name takes the plain 1-slice profile") {
    DeviceConfig config;
    config.mig_profile_allowlist = {{{"H100"}, {"2g.20gb", "9g.99gb", "1g.10gb+me", "4g.40gb"}}};
    const MigRegistration reg = discover_mig_profiles("NVIDIA-H100-SXM5-80GB", *h100, config);
    REQUIRE(reg.profiles.size() == 3);
    CHECK(reg.profiles[0] == MigProfile{"2g.20gb", 20096, 25, 2, {{0, 2}, {2, 2}, {4, 2}}});
    CHECK(reg.profiles[1] ==
          MigProfile{"1g.10gb+me", 9984, 13, 1, {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}});
    // 64 of 132 SMs: ceil(48.48) = 49.
    CHECK(reg.profiles[2] == MigProfile{"4g.40gb", 40448, 49, 4, {{0, 4}}});
    CHECK(reg.count == 7);
  }
  SECTION("a name the card has no instance profile for is skipped; count follows what is registered") {
    DeviceConfig config;
    config.mig_profile_allowlist = {{{"X"}, {"3g.40gb", "6g.60gb"}}};
    const MigRegistration reg = discover_mig_profiles("NVIDIA-X", *h100, config);
    REQUIRE(reg.profiles.size() == 1);
    CHECK(reg.profiles[0].name == "3g.40gb");
    CHECK(reg.count == 2);
  }
  SECTION("first entry wins by substring: the chart's H20 row names an H200's profiles") {
    const std::vector<MigInstanceFacts> facts = {{1, 18000, 16, 7, {{6, 1}}}, {7, 140000, 132, 1, {{0, 8}}}};
    const MigRegistration reg =
        discover_mig_profiles("NVIDIA-H200-SXM5", facts, chart_default_device_config());
    REQUIRE(reg.profiles.size() == 2);
    CHECK(reg.profiles[0].name == "1g.12gb");
    CHECK(reg.profiles[1].name == "7g.96gb");
    CHECK(reg.profiles[1].memory_mib == 140000);  // memory is NVML's, whatever the name says
  }
}

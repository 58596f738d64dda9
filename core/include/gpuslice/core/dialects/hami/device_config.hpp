// HAMi's device config (the hami-scheduler-device ConfigMap's
// device-config.yaml), the part gpuslice's placements read: the nvidia
// block's resource names and request defaults, the device plugin's split
// and scaling, and v2.10's migProfileAllowlist. Read as HAMi's LoadConfig
// reads it (unknown keys ignored, a value of the wrong type refused) and
// validated as HAMi validates it (ValidateMigProfileAllowlist,
// validateConfig); without a file, the Helm chart's default.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuslice/core/codec/manifest.hpp"
#include "gpuslice/core/model.hpp"

namespace gpuslice::core::codec {

// One allowlist entry: cards whose type holds one of `models` (a
// substring) may expose `profiles`, named as written here.
struct MigAllowlistEntry {
  std::vector<std::string> models, profiles;
  friend bool operator==(const MigAllowlistEntry&, const MigAllowlistEntry&) = default;
};

struct DeviceConfig {
  RequestDefaults requests;  // resource names, defaultMemory, defaultCores, defaultGPUNum
  NodeDeviceConfig plugin;   // deviceSplitCount, deviceMemoryScaling, deviceCoreScaling
  std::vector<MigAllowlistEntry> mig_profile_allowlist;
};

// charts/hami/templates/scheduler/device-configmap.yaml at v2.10.0, with
// the chart's values (deviceSplitCount 10, scalings 1).
DeviceConfig chart_default_device_config();

// Throws InputError naming `source`, the line and the field.
DeviceConfig parse_device_config(std::string_view text, const std::string& source);

// HAMi discoverMigProfiles: the first entry one of whose models is a
// substring of the card's type (first wins: "H20" matches an H200); null
// when none, and such a card registers no profile.
const MigAllowlistEntry* mig_allowlist_entry(const DeviceConfig& config, std::string_view card_type);

}  // namespace gpuslice::core::codec

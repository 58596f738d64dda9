#include "gpuslice/core/dialects/hami/registration.hpp"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "codec/fields.hpp"
#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::codec {

namespace {

using nlohmann::json;

using fields::parse_int;
using fields::split;

// Go strconv.ParseBool.
bool parse_go_bool(std::string_view t) {
  if (t == "1" || t == "t" || t == "T" || t == "true" || t == "TRUE" || t == "True") return true;
  if (t == "0" || t == "f" || t == "F" || t == "false" || t == "FALSE" || t == "False") return false;
  throw CodecError(fmt::format("invalid health field '{}': not a boolean", t));
}

template <typename T>
T json_int(const json& obj, const char* key, T fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) throw CodecError(fmt::format("field '{}' must be an integer", key));
  const auto v = it->get<int64_t>();
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
    throw CodecError(fmt::format("field '{}' out of range: {}", key, v));
  return static_cast<T>(v);
}

std::string json_string(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string()) throw CodecError(fmt::format("field '{}' must be a string", key));
  return it->get<std::string>();
}

// HAMi's encoder omits zero values (an unhealthy card has no "health"), but
// never a card's id or type: an entry without them (or with them empty) is
// not a card.
void validate(const Device& d) {
  if (d.uuid.empty()) throw CodecError("a device needs a non-empty id");
  if (d.uuid.find_first_of(",:;") != std::string::npos)
    throw CodecError(
        fmt::format("device id '{}' holds ',', ':' or ';' (HAMi's annotation separators)", d.uuid));
  if (d.type.empty()) throw CodecError(fmt::format("device '{}' needs a non-empty type", d.uuid));
  if (d.slots < 0) throw CodecError(fmt::format("device '{}': count must not be negative", d.uuid));
  if (d.memory_mib < 0) throw CodecError(fmt::format("device '{}': devmem must not be negative", d.uuid));
  if (d.cores < 0) throw CodecError(fmt::format("device '{}': devcore must not be negative", d.uuid));
  if (d.index < 0) throw CodecError(fmt::format("device '{}': index must not be negative", d.uuid));
}

// HAMi v2.10's migProfiles of one card (devices.go MigProfile): the wire
// names, null or absent placements read as none, unknown keys ignored (as
// Go's decoder does). What NVML could never report is refused: a profile
// without a name, negative memory or compute, memory past the card's, a
// placement of no slice or past the card's slices, or two placements of
// one profile on a shared slice.
std::vector<MigProfile> decode_mig_profiles(const json& item, const Device& d) {
  std::vector<MigProfile> out;
  auto list = item.find("migProfiles");
  if (list == item.end() || list->is_null()) return out;
  if (!list->is_array())
    throw CodecError(fmt::format("device '{}': field 'migProfiles' must be an array", d.uuid));
  for (size_t i = 0; i < list->size(); ++i) {
    const json& entry = (*list)[i];
    const std::string where = fmt::format("device '{}': migProfiles[{}]", d.uuid, i);
    if (!entry.is_object()) throw CodecError(where + " must be an object");
    MigProfile p;
    try {
      p.name = json_string(entry, "name");
      p.memory_mib = json_int<int32_t>(entry, "memoryMB", 0);
      p.cores = json_int<int32_t>(entry, "core", 0);
      p.slice_count = json_int<uint32_t>(entry, "sliceCount", 0);
    } catch (const CodecError& e) {
      throw CodecError(fmt::format("{}: {}", where, e.what()));
    }
    if (p.name.empty()) throw CodecError(where + ": field 'name' must not be empty");
    if (p.memory_mib < 0 || p.cores < 0)
      throw CodecError(where + ": fields 'memoryMB' and 'core' must not be negative");
    if (p.memory_mib > d.memory_mib)
      throw CodecError(fmt::format("{} ('{}'): memoryMB {} exceeds the card's devmem {}", where, p.name,
                                   p.memory_mib, d.memory_mib));
    auto placements = entry.find("placements");
    if (placements != entry.end() && !placements->is_null()) {
      if (!placements->is_array()) throw CodecError(where + ": field 'placements' must be an array");
      for (size_t k = 0; k < placements->size(); ++k) {
        const json& pl = (*placements)[k];
        const std::string at = fmt::format("{}.placements[{}]", where, k);
        if (!pl.is_object()) throw CodecError(at + " must be an object");
        MigPlacement placement;
        try {
          placement.start = json_int<uint32_t>(pl, "start", 0);
          placement.size = json_int<uint32_t>(pl, "size", 0);
        } catch (const CodecError& e) {
          throw CodecError(fmt::format("{}: {}", at, e.what()));
        }
        if (placement.size == 0) throw CodecError(at + ": field 'size' must not be 0");
        if (placement.start >= kMigSlices || placement.size > kMigSlices - placement.start)
          throw CodecError(fmt::format("{} (start {}, size {}) exceeds the card's {} memory slices", at,
                                       placement.start, placement.size, kMigSlices));
        for (size_t o = 0; o < p.placements.size(); ++o) {
          const MigPlacement& other = p.placements[o];
          if (placement.start < other.start + other.size && other.start < placement.start + placement.size)
            throw CodecError(fmt::format("{} (start {}, size {}) overlaps placements[{}] (start {}, size {})",
                                         at, placement.start, placement.size, o, other.start, other.size));
        }
        p.placements.push_back(placement);
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<Device> decode_json(std::string_view text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw CodecError(fmt::format("registration is not valid JSON: {}", e.what()));
  }
  if (!doc.is_array()) throw CodecError("registration JSON must be an array of devices");
  std::vector<Device> out;
  for (const auto& item : doc) {
    if (!item.is_object()) throw CodecError("registration JSON: each device must be an object");
    Device d;
    d.uuid = json_string(item, "id");
    d.index = json_int<int>(item, "index", 0);
    d.slots = json_int<int32_t>(item, "count", 0);
    d.memory_mib = json_int<int32_t>(item, "devmem", 0);
    d.cores = json_int<int32_t>(item, "devcore", 0);
    d.type = json_string(item, "type");
    d.numa = json_int<int>(item, "numa", 0);
    d.mode = json_string(item, "mode");
    auto h = item.find("health");
    if (h != item.end() && !h->is_null()) {
      if (!h->is_boolean()) throw CodecError("field 'health' must be a boolean");
      d.healthy = h->get<bool>();
    }
    std::string vendor = json_string(item, "devicevendor");
    if (!vendor.empty()) d.vendor = vendor;
    validate(d);
    d.mig_profiles = decode_mig_profiles(item, d);
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<Device> decode_legacy(std::string_view text) {
  if (text.find(':') == std::string_view::npos)
    throw CodecError("node annotation missing device separator ':'");
  std::vector<Device> out;
  for (auto segment : split(text, ':')) {
    if (segment.empty()) continue;
    auto f = split(segment, ',');
    if (f.size() != 7 && f.size() != 9)
      throw CodecError(
          fmt::format("unexpected field count {} in device '{}' (want 7 or 9)", f.size(), segment));
    Device d;
    d.uuid = std::string(f[0]);
    d.slots = parse_int<int32_t>(f[1], "count");
    d.memory_mib = parse_int<int32_t>(f[2], "devmem");
    d.cores = parse_int<int32_t>(f[3], "devcore");
    d.type = std::string(f[4]);
    d.numa = parse_int<int>(f[5], "numa");
    d.healthy = parse_go_bool(f[6]);
    if (f.size() == 9) {
      d.index = parse_int<int>(f[7], "index");
      d.mode = std::string(f[8]);
    }
    validate(d);
    out.push_back(std::move(d));
  }
  if (out.empty()) throw CodecError(fmt::format("registration '{}' lists no device", text));
  return out;
}

}  // namespace

std::vector<Device> decode_registration(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '[') return decode_json(text);
  return decode_legacy(text);
}

std::string encode_registration_json(const std::vector<Device>& devices) {
  // Field order and omitted zero values as HAMi's Go encoder writes them.
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& d : devices) {
    nlohmann::ordered_json o;
    if (!d.uuid.empty()) o["id"] = d.uuid;
    if (d.index != 0) o["index"] = d.index;
    if (d.slots != 0) o["count"] = d.slots;
    if (d.memory_mib != 0) o["devmem"] = d.memory_mib;
    if (d.cores != 0) o["devcore"] = d.cores;
    if (!d.type.empty()) o["type"] = d.type;
    if (d.numa != 0) o["numa"] = d.numa;
    if (!d.mode.empty()) o["mode"] = d.mode;
    // HAMi v2.10 MarshalNodeDevices: migProfiles omitted when empty; each
    // profile's fields always written (no omitempty), placements null when none.
    if (!d.mig_profiles.empty()) {
      nlohmann::ordered_json profiles = nlohmann::ordered_json::array();
      for (const auto& p : d.mig_profiles) {
        nlohmann::ordered_json po;
        po["name"] = p.name;
        po["memoryMB"] = p.memory_mib;
        po["core"] = p.cores;
        po["sliceCount"] = p.slice_count;
        nlohmann::ordered_json placements = nullptr;
        for (const auto& pl : p.placements) {
          nlohmann::ordered_json plo;
          plo["start"] = pl.start;
          plo["size"] = pl.size;
          placements.push_back(std::move(plo));
        }
        po["placements"] = std::move(placements);
        profiles.push_back(std::move(po));
      }
      o["migProfiles"] = std::move(profiles);
    }
    if (d.healthy) o["health"] = true;
    arr.push_back(std::move(o));
  }
  // Bytes that are not UTF-8 (a legacy annotation may carry any) are replaced, not thrown.
  return arr.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string encode_registration_legacy(const std::vector<Device>& devices) {
  std::string out;
  for (const auto& d : devices)
    out += fmt::format("{},{},{},{},{},{},{},{},{}:", d.uuid, d.slots, d.memory_mib, d.cores, d.type, d.numa,
                       d.healthy ? "true" : "false", d.index, d.mode);
  return out;
}

std::vector<std::vector<int>> decode_pair_scores(std::string_view text, const std::vector<Device>& devices) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw CodecError(fmt::format("pair scores are not valid JSON: {}", e.what()));
  }
  if (!doc.is_array()) throw CodecError("pair scores must be a JSON array");
  auto position = [&](const std::string& uuid) -> int {
    for (size_t i = 0; i < devices.size(); ++i)
      if (devices[i].uuid == uuid) return static_cast<int>(i);
    return -1;
  };
  std::vector<std::vector<int>> m(devices.size(), std::vector<int>(devices.size(), 0));
  for (const auto& entry : doc) {
    if (!entry.is_object()) throw CodecError("pair scores: each entry must be an object");
    const int a = position(json_string(entry, "uuid"));
    auto scores = entry.find("score");
    if (a < 0 || scores == entry.end() || scores->is_null()) continue;  // HAMi ignores unknown cards
    if (!scores->is_object()) throw CodecError("pair scores: 'score' must be an object");
    for (auto it = scores->begin(); it != scores->end(); ++it) {
      const int b = position(it.key());
      if (!it->is_number_integer())
        throw CodecError(fmt::format("pair score for '{}' must be an integer", it.key()));
      if (b >= 0) m[static_cast<size_t>(a)][static_cast<size_t>(b)] = it->get<int>();
    }
  }
  return m;
}

std::string encode_pair_scores(const std::vector<std::vector<int>>& scores,
                               const std::vector<Device>& devices) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (size_t a = 0; a < devices.size() && a < scores.size(); ++a) {
    nlohmann::ordered_json o;
    o["uuid"] = devices[a].uuid;
    nlohmann::ordered_json s = nlohmann::ordered_json::object();
    for (size_t b = 0; b < devices.size() && b < scores[a].size(); ++b)
      if (a != b) s[devices[b].uuid] = scores[a][b];
    o["score"] = std::move(s);
    arr.push_back(std::move(o));
  }
  // Bytes that are not UTF-8 (a legacy annotation may carry any) are replaced, not thrown.
  return arr.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::vector<std::string> decode_uuid_list(std::string_view text) {
  std::vector<std::string> out;
  for (auto part : split(text, ',')) {
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.front()))) part.remove_prefix(1);
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back()))) part.remove_suffix(1);
    if (!part.empty()) out.emplace_back(part);
  }
  return out;
}

std::vector<Device> register_cards(const std::vector<PhysicalCard>& cards, const NodeDeviceConfig& config) {
  if (config.split_count <= 0) throw CodecError("device split count must be positive");
  if (!(config.memory_scaling > 0) || !(config.core_scaling > 0))
    throw CodecError("scaling factors must be positive");
  std::vector<Device> out;
  for (size_t i = 0; i < cards.size(); ++i) {
    Device d;
    d.uuid = cards[i].uuid;
    d.index = static_cast<int>(i);
    d.type = registered_type(cards[i].nvml_name);
    d.slots = config.split_count;
    d.memory_mib = static_cast<int64_t>(static_cast<double>(cards[i].memory_mib) * config.memory_scaling);
    d.cores = static_cast<int32_t>(100.0 * config.core_scaling);
    d.numa = cards[i].numa;
    d.mode = config.operating_mode;
    d.healthy = cards[i].healthy;
    out.push_back(std::move(d));
  }
  return out;
}

std::string registered_type(std::string_view nvml_name) {
  if (nvml_name.substr(0, 6) == "NVIDIA") return std::string(nvml_name);
  return "NVIDIA-" + std::string(nvml_name);
}

}  // namespace gpuslice::core::codec

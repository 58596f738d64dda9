// What the reader's JSON and YAML sides share besides the decoder: the
// duplicate-key check, line counting, and the walk from a document to its
// objects (a list's items, or the document itself).
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuslice/core/codec/kube_reader.hpp"
#include "kube_decode.hpp"

namespace gpuslice::core::codec::detail {

// Lines of a text in memory, counted from the last line asked for: objects
// ask in order, so a whole read counts each newline about once.
class LineCounter {
 public:
  explicit LineCounter(std::string_view text) : text_(text) {}
  int line_of(Position offset) const;

 private:
  std::string_view text_;
  mutable size_t at_ = 0;
  mutable int line_ = 1;
};

// YAML keys must be unique (YAML 1.2); a repeated one is refused with both
// lines, as the old reader did for every mapping. One stack of keys for the
// mappings open at once; a mapping past 32 keys is checked by hash.
class UniqueKeys {
 public:
  void open() { starts_.push_back({keys_.size(), {}}); }
  // The earlier position of `key` in the innermost open mapping, or kNoPosition.
  Position add(std::string_view key, Position at);
  void close();

 private:
  struct Open {
    size_t first;
    std::unordered_map<std::string_view, Position> hashed;  // only past kLinear keys
  };
  static constexpr size_t kLinear = 32;
  std::vector<std::pair<std::string_view, Position>> keys_;
  std::vector<Open> starts_;
};

// The reader's context for one object of a text: lines and the raw object.
class TextContext : public ReadContext {
 public:
  TextContext(const std::string& source, const LineCounter* lines, bool positions_are_lines)
      : source_(source), lines_(lines), positions_are_lines_(positions_are_lines) {}
  const std::string& source() const override { return source_; }
  int line_of(Position at) const override {
    if (at == kNoPosition || (!lines_ && !positions_are_lines_)) return 0;
    if (positions_are_lines_) return static_cast<int>(at);
    return lines_ ? lines_->line_of(at) : 0;
  }
  std::string_view raw_object() const override { return raw_; }
  void set_raw(std::string_view raw) { raw_ = raw; }

 private:
  const std::string& source_;
  const LineCounter* lines_;
  bool positions_are_lines_;
  std::string_view raw_;
};

inline bool is_list_kind(std::string_view kind) { return kind.size() >= 4 && kind.ends_with("List"); }

// The kind of a list's items when they name none: "PodList" -> "Pod".
inline std::string item_kind_of(std::string_view list_kind, const ReadOptions& options) {
  if (is_list_kind(list_kind) && list_kind != "List")
    return std::string(list_kind.substr(0, list_kind.size() - 4));
  return options.default_kind;
}

// Decodes one object (a mapping) whose kind and apiVersion were looked up
// first; nullopt for the kinds the reader does not decode (checked and skipped).
template <class V>
std::optional<KubeObject> decode_object(V& object, std::string kind, std::string api_version, Position at,
                                        const TextContext& context) {
  const DecodedKind decoded = decoded_kind(kind, api_version);
  if (decoded == DecodedKind::Other) {
    object.skip();
    return std::nullopt;
  }
  ObjectHeader header;
  header.kind = std::move(kind);
  header.api_version = std::move(api_version);
  header.at = at;
  header.line = context.line_of(at);
  return ObjectDecoder<V>(context).decode(object, decoded, std::move(header));
}

}  // namespace gpuslice::core::codec::detail

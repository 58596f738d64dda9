// The reader's JSON side: simdjson's On-Demand API over the whole text, one
// object decoded at a time. Values the decoder does not ask for are walked
// and checked (structure, strings, numbers, literals) without being copied:
// On-Demand alone would step over them unchecked, and a file the old reader
// refused must still be refused.
#include "kube_json.hpp"

#include <simdjson.h>

#include <bit>
#include <cstring>
#include <optional>

#include "gpuslice/core/errors.hpp"
#include "kube_shared.hpp"

namespace gpuslice::core::codec::detail {

namespace {

namespace od = simdjson::ondemand;

std::string describe(simdjson::error_code e) {
  switch (e) {
    case simdjson::UNCLOSED_STRING:
      return "a string is not closed (is the file cut short?)";
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
      return "the text ends inside an object or list (is the file cut short?)";
    case simdjson::DEPTH_ERROR:
      return "nested too deep; no Kubernetes object is";
    case simdjson::UTF8_ERROR:
      return "not valid UTF-8";
    case simdjson::TRAILING_CONTENT:
      return "more text after the JSON document";
    case simdjson::EMPTY:
      return "no JSON document";
    case simdjson::CAPACITY:
      return "larger than the JSON reader takes (4 GiB)";
    default:
      return simdjson::error_message(e);
  }
}

// One read of a JSON text: the document, and how to report on it.
class JsonRead {
 public:
  JsonRead(const KubeText& text, od::document& doc, const LineCounter* lines, size_t max_depth)
      : text_(text), doc_(doc), context_(text.source(), lines, false), max_depth_(max_depth) {}

  // One level into a mapping or list, for as long as it lives. On-Demand
  // does not bound the depth of what we walk, and the walk recurses: a
  // bound keeps hostile nesting from overflowing the stack.
  class Nested {
   public:
    explicit Nested(JsonRead& r) : r_(r) {
      if (++r_.depth_ > r_.max_depth_) r_.syntax(simdjson::DEPTH_ERROR);
    }
    ~Nested() { --r_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    JsonRead& r_;
  };

  const TextContext& context() const { return context_; }
  TextContext& context() { return context_; }
  UniqueKeys& keys() { return keys_; }

  Position offset(const char* p) const { return static_cast<Position>(p - text_.text().data()); }

  // Where the document's iterator stands (for syntax errors).
  Position here() {
    const char* p = nullptr;
    if (doc_.current_location().get(p) != simdjson::SUCCESS || !p)
      return offset(text_.text().data() + text_.text().size());
    return offset(p);
  }

  // Nothing but space may follow the document.
  void end_of_document() {
    const char* p = nullptr;
    if (doc_.current_location().get(p) == simdjson::SUCCESS && p)
      syntax(simdjson::TRAILING_CONTENT, offset(p));
  }

  [[noreturn]] void syntax(simdjson::error_code e, Position at = kNoPosition) {
    context_.fail(at == kNoPosition ? here() : at, "", "JSON syntax error: " + describe(e));
  }
  void check(simdjson::error_code e) {
    if (e != simdjson::SUCCESS) syntax(e);
  }

 private:
  const KubeText& text_;
  od::document& doc_;
  TextContext context_;
  UniqueKeys keys_;
  size_t max_depth_;
  size_t depth_ = 0;
};

// A JSON string's text from its raw bytes (the opening quote at raw[-1]):
// the bytes themselves when nothing is escaped, else unescaped. Control
// characters (below 0x20) must be escaped in JSON and are refused.
struct RawString {
  std::string_view raw;  // between the quotes, as written
  bool escaped = false;
};

RawString scan_string(JsonRead& r, const char* start, Position at) {
  const char* p = start;
  bool escaped = false;
  // Eight bytes at a time up to the first quote, backslash or control
  // character (the text is padded past its end and every string ends in a
  // quote, so no word read leaves the buffer). A quote ends the string here;
  // an escape or a control character goes to the byte loop below, which
  // checks it and reads on.
  static_assert(std::endian::native == std::endian::little, "the first special byte is the lowest");
  constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7FULL, kOnes = 0x0101010101010101ULL;
  const auto zero_bytes = [&](uint64_t x) { return ~(((x & kLow7) + kLow7) | x | kLow7); };
  for (;;) {
    uint64_t word;
    std::memcpy(&word, p, sizeof word);
    const uint64_t below_space = ~(((word & kLow7) + kOnes * 0x60) | word | kLow7);
    const uint64_t special =
        zero_bytes(word ^ (kOnes * '"')) | zero_bytes(word ^ (kOnes * '\\')) | below_space;
    if (special == 0) {
      p += sizeof word;
      continue;
    }
    p += std::countr_zero(special) / 8;
    if (*p == '"') return {std::string_view(start, static_cast<size_t>(p - start)), false};
    break;
  }
  for (;; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"') break;
    if (c < 0x20)
      r.context().fail(at, "", "JSON syntax error: a control character inside a string must be escaped");
    if (c == '\\') {
      escaped = true;
      const char e = p[1];
      if (e == 'u') {
        for (int i = 2; i < 6; ++i)
          if (!std::isxdigit(static_cast<unsigned char>(p[i])))
            r.context().fail(at, "", "JSON syntax error: a \\u escape needs four hex digits");
        p += 5;
      } else if (std::strchr("\"\\/bfnrt", e) && e != '\0') {
        ++p;
      } else {
        r.context().fail(at, "", "JSON syntax error: an unknown escape in a string");
      }
    }
  }
  return {std::string_view(start, static_cast<size_t>(p - start)), escaped};
}

bool valid_number(std::string_view t) {
  size_t i = 0;
  auto digits = [&] {
    const size_t from = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i > from;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (i < t.size() && t[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == t.size();
}

std::string_view trimmed(std::string_view t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
    t.remove_suffix(1);
  return t;
}

class JsonValue {
 public:
  JsonValue(JsonRead& r, od::value v) : r_(r), value_(v) {}

  Shape shape() {
    od::json_type t;
    if (auto e = value_.type().get(t)) r_.syntax(e, at());
    switch (t) {
      case od::json_type::object:
        return Shape::Mapping;
      case od::json_type::array:
        return Shape::Sequence;
      case od::json_type::null:
        return Shape::Null;
      default:
        return Shape::Text;
    }
  }

  Position at() { return r_.offset(value_.raw_json_token().data()); }
  bool consumed() const { return consumed_; }

  Scalar scalar() { return leaf(true); }

  template <class F>
  void fields(F visit) {
    consumed_ = true;
    const JsonRead::Nested nested(r_);
    od::object& object = started_object();
    UniqueKeys& keys = r_.keys();
    keys.open();
    for (auto entry : object) {
      od::field field;
      if (auto e = std::move(entry).get(field)) r_.syntax(e);
      const char* raw_key = field.key().raw();
      const Position key_at = r_.offset(raw_key - 1);
      const RawString raw = scan_string(r_, raw_key, key_at);
      std::string_view key = raw.raw;
      if (raw.escaped && field.unescaped_key().get(key) != simdjson::SUCCESS)
        r_.context().fail(key_at, "", "JSON syntax error: a key is not a valid string");
      if (const Position first = keys.add(key, key_at); first != kNoPosition)
        r_.context().fail(key_at, std::string(key),
                          fmt::format("duplicate key (first at line {}); keys must be unique",
                                      r_.context().line_of(first)));
      JsonValue child(r_, field.value());
      visit(key, key_at, child);
      if (!child.consumed()) child.skip();
    }
    keys.close();
  }

  template <class F>
  void items(F visit) {
    consumed_ = true;
    const JsonRead::Nested nested(r_);
    od::array array;
    if (auto e = value_.get_array().get(array)) r_.syntax(e, at());
    size_t i = 0;
    for (auto entry : array) {
      od::value v;
      if (auto e = std::move(entry).get(v)) r_.syntax(e);
      JsonValue child(r_, v);
      visit(i++, child);
      if (!child.consumed()) child.skip();
    }
  }

  // Walks the value, checking what On-Demand would step over.
  void skip() {
    if (consumed_) return;
    switch (shape()) {
      case Shape::Mapping:
        fields([](std::string_view, Position, JsonValue&) {});
        break;
      case Shape::Sequence:
        items([](size_t, JsonValue&) {});
        break;
      default:
        leaf(false);
        break;
    }
    consumed_ = true;
  }

  // The text of a scalar member (kind, apiVersion), looked up before the
  // object is walked: "" when missing or not a scalar. The walk then starts
  // from the object's first key.
  std::string member_text(const char* key) {
    od::object& object = started_object();
    std::string out;
    od::value v;
    const auto found = object.find_field_unordered(key).get(v);
    if (found == simdjson::SUCCESS) {
      JsonValue member(r_, v);
      if (member.shape() == Shape::Text) out = member.leaf(true).text;
    } else if (found != simdjson::NO_SUCH_FIELD) {
      r_.syntax(found);
    }
    bool reset = false;
    if (auto e = object.reset().get(reset)) r_.syntax(e);
    return out;
  }

 private:
  od::object& started_object() {
    if (!object_) {
      od::object object;
      if (auto e = value_.get_object().get(object)) r_.syntax(e, at());
      object_ = object;
    }
    return *object_;
  }

  // A scalar, checked; its text unescaped when `read` (a skipped string is
  // only checked: its bytes are never copied).
  Scalar leaf(bool read) {
    Scalar s;
    s.at = at();
    const Shape sh = shape();
    s.kind = kind_of(sh);
    if (sh == Shape::Mapping || sh == Shape::Sequence) {
      skip();
      return s;
    }
    consumed_ = true;
    const std::string_view token = trimmed(value_.raw_json_token());
    if (token.empty()) r_.syntax(simdjson::TAPE_ERROR, s.at);
    if (token.front() == '"') {
      s.quoted = true;
      const RawString raw = scan_string(r_, token.data() + 1, s.at);
      if (!read) return s;
      if (!raw.escaped) {
        s.text.assign(raw.raw);
      } else {
        std::string_view unescaped;
        if (auto e = value_.get_string().get(unescaped)) r_.syntax(e, s.at);
        s.text.assign(unescaped);
      }
      return s;
    }
    check_literal(token, s.at);
    if (read && sh == Shape::Text) s.text.assign(token);
    return s;
  }

  void check_literal(std::string_view token, Position at) {
    const char c = token.front();
    const bool ok = c == 't'   ? token == "true"
                    : c == 'f' ? token == "false"
                    : c == 'n' ? token == "null"
                               : valid_number(token);
    if (!ok) r_.context().fail(at, "", fmt::format("JSON syntax error: '{:.40}' is not a JSON value", token));
  }

  JsonRead& r_;
  od::value value_;
  std::optional<od::object> object_;  // once started (a member looked up first)
  bool consumed_ = false;
};

// One JSON text opened: simdjson's parser over it, lines counted only when
// an error asks, and its root, which must be a mapping (`not_mapping` says
// what it should have been otherwise).
class OpenedJson {
 public:
  OpenedJson(const KubeText& text, const ReadOptions& options, const char* not_mapping)
      : lines_(text.text()), read_(text, doc_, options.count_lines ? &lines_ : nullptr, options.max_depth) {
    // simdjson counts the document itself as a level, and its checked builds
    // assert below their own bound: ours (Nested) must fire first.
    if (parser_.allocate(text.text().size(), options.max_depth + 2) != simdjson::SUCCESS)
      read_.context().fail(kNoPosition, "", "JSON: not enough memory to read this file");
    if (auto e = parser_
                     .iterate(simdjson::padded_string_view(text.text().data(), text.text().size(),
                                                           text.capacity()))
                     .get(doc_))
      read_.context().fail(1, "", "JSON syntax error: " + describe(e));
    od::value value;
    if (auto e = doc_.get_value().get(value)) read_.syntax(e);
    root_.emplace(read_, value);
    if (root_->shape() != Shape::Mapping) read_.context().fail(root_->at(), "", not_mapping);
  }
  OpenedJson(const OpenedJson&) = delete;
  OpenedJson& operator=(const OpenedJson&) = delete;

  JsonRead& read() { return read_; }
  JsonValue& root() { return *root_; }
  od::document& doc() { return doc_; }

 private:
  od::parser parser_;
  const LineCounter lines_;
  od::document doc_;
  JsonRead read_;
  std::optional<JsonValue> root_;
};

// Decodes one object (a mapping, with its own kind or `inherited`) and hands it over.
void read_one(JsonRead& r, JsonValue& object, std::string kind, const std::string& inherited,
              const ObjectVisitor& visit, const KubeText& text) {
  const Position at = object.at();
  std::string api_version = object.member_text("apiVersion");
  if (kind.empty()) kind = inherited;
  auto decoded = decode_object(object, std::move(kind), std::move(api_version), at, r.context());
  if (!decoded) return;
  // The object's text, up to where the walk stopped (after its closing brace).
  const char* end = text.text().data() + text.text().size();
  const Position stop = r.here();
  if (stop != kNoPosition && stop <= text.text().size()) end = text.text().data() + stop;
  const char* begin = text.text().data() + at;
  r.context().set_raw(trimmed(std::string_view(begin, static_cast<size_t>(end - begin))));
  visit(std::move(*decoded), r.context());
  r.context().set_raw({});
}

}  // namespace

ListInfo read_json(const KubeText& text, const ObjectVisitor& visit, const ReadOptions& options) {
  OpenedJson opened(text, options, "a document must be a Kubernetes object (a mapping)");
  JsonRead& r = opened.read();
  JsonValue& root = opened.root();

  // A list when its items are a list (Kubernetes' rule); its own fields
  // (kind, metadata) may come before or after them.
  ListInfo info;
  bool list = false;
  Position items_at = kNoPosition;
  root.fields([&](std::string_view key, Position, JsonValue& value) {
    if (key == "kind") {
      info.kind = value.scalar().text;
    } else if (key == "metadata" && value.shape() == Shape::Mapping) {
      value.fields([&](std::string_view k, Position, JsonValue& v) {
        if (k == "resourceVersion") info.resource_version = v.scalar().text;
        if (k == "continue") info.continue_token = v.scalar().text;
      });
    } else if (key == "items") {
      items_at = value.at();
      if (value.shape() != Shape::Sequence) return;
      list = true;
      const std::string inherited = item_kind_of(info.kind, options);
      value.items([&](size_t, JsonValue& item) {
        if (item.shape() != Shape::Mapping)
          r.context().fail(item.at(), "items[]", "must be a Kubernetes object");
        const Position at = item.at();
        read_one(r, item, item.member_text("kind"), inherited, visit, text);
        // The items before this one are done with: their text may go.
        text.release_before(at);
      });
    }
  });
  if (!list) {
    if (items_at != kNoPosition && is_list_kind(info.kind))
      r.context().fail(items_at, "items", "must be a list");
    opened.doc().rewind();
    od::value root_value;
    if (auto e = opened.doc().get_value().get(root_value)) r.syntax(e);
    JsonValue object(r, root_value);
    read_one(r, object, object.member_text("kind"), options.default_kind, visit, text);
    info = {};
  }
  r.end_of_document();
  return info;
}

WatchEvent read_json_watch_event(const KubeText& line, const ReadOptions& options) {
  OpenedJson opened(line, options, "a watch event must be a JSON object");
  JsonRead& r = opened.read();
  JsonValue& root = opened.root();
  WatchEvent event;
  root.fields([&](std::string_view key, Position, JsonValue& value) {
    if (key == "type") {
      event.type = value.scalar().text;
    } else if (key == "object") {
      if (value.shape() != Shape::Mapping) r.context().fail(value.at(), "object", "must be an object");
      const Position at = value.at();
      const std::string kind = value.member_text("kind");
      if (kind == "Status" || event.type == "ERROR") {
        value.fields([&](std::string_view k, Position, JsonValue& v) {
          if (k == "code") {
            const Scalar s = v.scalar();
            if (s.is_text() && !s.quoted) event.status_code = std::strtoll(s.text.c_str(), nullptr, 10);
          }
        });
      } else {
        read_one(
            r, value, kind, options.default_kind,
            [&](KubeObject&& object, const ReadContext&) {
              event.resource_version = header_of(object).meta.resource_version.text;
              event.object = std::move(object);
            },
            line);
        if (!event.object) value.skip();
      }
      const Position stop = r.here();
      const auto text = line.text();
      event.raw_object.assign(trimmed(text.substr(at, (stop <= text.size() ? stop : text.size()) - at)));
    }
  });
  r.end_of_document();
  return event;
}

}  // namespace gpuslice::core::codec::detail

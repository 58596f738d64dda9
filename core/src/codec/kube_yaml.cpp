// The reader's YAML side: libyaml's event parser over the text. A list's
// items are each gathered into a small tree of their own (a flat vector of
// nodes), decoded, and dropped; the top level of a document keeps only its
// own keys. Aliases are expanded by copying what their anchor named, counted
// against a bound (an "alias bomb" is refused, not expanded). Positions on
// this side are lines: libyaml counts them as it reads.
#include <yaml.h>

#include <map>
#include <string>
#include <vector>

#include "gpuslice/core/errors.hpp"
#include "kube_json.hpp"
#include "kube_shared.hpp"

namespace gpuslice::core::codec::detail {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

struct DomNode {
  Shape shape = Shape::Null;
  bool quoted = false;
  uint32_t line = 0;
  uint32_t text_at = 0, text_size = 0;         // Text
  uint32_t first_child = kNone, next = kNone;  // Mapping: key, value, key, value...; Sequence: items
};

// One object (or a document's top level) as a tree of its own.
struct Dom {
  std::vector<DomNode> nodes;
  std::string text;
  std::string_view text_of(const DomNode& n) const { return {text.data() + n.text_at, n.text_size}; }
  void clear() {
    nodes.clear();
    text.clear();
  }
};

// What an anchor named: a copy of its subtree.
struct Anchored {
  std::vector<DomNode> nodes;  // links relative to the first
  std::string text;
};

class YamlEvents {
 public:
  YamlEvents(const KubeText& text, const TextContext& context) : context_(context) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.text().data()),
                                 text.text().size());
  }
  ~YamlEvents() {
    if (have_) yaml_event_delete(&event_);
    yaml_parser_delete(&parser_);
  }
  YamlEvents(const YamlEvents&) = delete;
  YamlEvents& operator=(const YamlEvents&) = delete;

  const yaml_event_t& next() {
    if (have_) yaml_event_delete(&event_);
    have_ = false;
    if (!yaml_parser_parse(&parser_, &event_)) {
      std::string what = parser_.problem ? parser_.problem : "malformed";
      if (parser_.context) what = std::string(parser_.context) + ": " + what;
      context_.fail(parser_.problem_mark.line + 1, "", "YAML syntax error: " + what);
    }
    have_ = true;
    return event_;
  }
  const yaml_event_t& current() const { return event_; }

 private:
  const TextContext& context_;
  yaml_parser_t parser_{};
  yaml_event_t event_{};
  bool have_ = false;
};

Position line_of(const yaml_event_t& e) { return static_cast<Position>(e.start_mark.line + 1); }

// Builds trees from events, expanding aliases; one per document.
class TreeBuilder {
 public:
  TreeBuilder(YamlEvents& events, const TextContext& context, size_t budget, size_t max_depth)
      : events_(events), context_(context), budget_(budget), max_depth_(max_depth) {}

  // YAML keys are unique: a repeated key is refused with both lines.
  void unique_keys(const Dom& dom, uint32_t mapping) {
    keys_.open();
    uint32_t k = dom.nodes[mapping].first_child;
    while (k != kNone) {
      const DomNode& key = dom.nodes[k];
      if (key.shape == Shape::Text) {
        const Position first = keys_.add(dom.text_of(key), key.line);
        if (first != kNoPosition)
          context_.fail(key.line, std::string(dom.text_of(key)),
                        fmt::format("duplicate key (first at line {}); YAML keys must be unique", first));
      }
      const uint32_t value = key.next;
      k = value == kNone ? kNone : dom.nodes[value].next;
    }
    keys_.close();
  }

  // Adds the node starting at the current event (and its subtree) to `dom`;
  // returns its index. Consumes through the node's last event.
  uint32_t build(Dom& dom) {
    struct Open {
      uint32_t node, last_child;
      std::string anchor;
    };
    std::vector<Open> stack;
    uint32_t root = kNone;
    for (bool first = true;; first = false) {
      const yaml_event_t& e = first ? events_.current() : events_.next();
      uint32_t added = kNone;
      bool closes = false;
      switch (e.type) {
        case YAML_SCALAR_EVENT:
          added = scalar(dom, e);
          remember(dom, e.data.scalar.anchor, added);
          break;
        case YAML_ALIAS_EVENT:
          added = paste(dom, e);
          break;
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT: {
          added = add(dom);
          DomNode& n = dom.nodes[added];
          n.shape = e.type == YAML_MAPPING_START_EVENT ? Shape::Mapping : Shape::Sequence;
          n.line = static_cast<uint32_t>(line_of(e));
          const yaml_char_t* anchor =
              e.type == YAML_MAPPING_START_EVENT ? e.data.mapping_start.anchor : e.data.sequence_start.anchor;
          if (stack.size() >= max_depth_)
            context_.fail(n.line, "",
                          fmt::format("nested deeper than {} levels; no Kubernetes object is", max_depth_));
          link(dom, stack.empty() ? kNone : stack.back().node,
               stack.empty() ? nullptr : &stack.back().last_child, added);
          stack.push_back({added, kNone, anchor ? reinterpret_cast<const char*>(anchor) : ""});
          if (root == kNone) root = added;
          continue;
        }
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT: {
          const Open open = stack.back();
          stack.pop_back();
          if (dom.nodes[open.node].shape == Shape::Mapping) unique_keys(dom, open.node);
          if (!open.anchor.empty()) store(dom, open.anchor, open.node);
          closes = true;
          break;
        }
        default:
          context_.fail(line_of(e), "", "YAML syntax error: unexpected event");
      }
      if (!closes) {
        link(dom, stack.empty() ? kNone : stack.back().node,
             stack.empty() ? nullptr : &stack.back().last_child, added);
        if (root == kNone) root = added;
      }
      if (stack.empty()) return root;
    }
  }

 private:
  uint32_t add(Dom& dom) {
    if (++created_ > budget_)
      context_.fail(line_of(events_.current()), "",
                    "the document expands to too many nodes (aliases repeated without end?)");
    dom.nodes.emplace_back();
    return static_cast<uint32_t>(dom.nodes.size() - 1);
  }

  static void link(Dom& dom, uint32_t parent, uint32_t* last_child, uint32_t child) {
    if (parent == kNone) return;
    if (*last_child == kNone)
      dom.nodes[parent].first_child = child;
    else
      dom.nodes[*last_child].next = child;
    *last_child = child;
  }

  uint32_t scalar(Dom& dom, const yaml_event_t& e) {
    const uint32_t at = add(dom);
    DomNode& n = dom.nodes[at];
    n.line = static_cast<uint32_t>(line_of(e));
    const auto& s = e.data.scalar;
    const std::string_view value(reinterpret_cast<const char*>(s.value), s.length);
    const std::string_view tag = s.tag ? reinterpret_cast<const char*>(s.tag) : "";
    const bool plain = s.style == YAML_PLAIN_SCALAR_STYLE;
    if (tag == "tag:yaml.org,2002:null" ||
        (tag.empty() && plain &&
         (value.empty() || value == "~" || value == "null" || value == "Null" || value == "NULL"))) {
      n.shape = Shape::Null;
      return at;
    }
    n.shape = Shape::Text;
    n.quoted = !plain || tag == "tag:yaml.org,2002:str";
    n.text_at = static_cast<uint32_t>(dom.text.size());
    n.text_size = static_cast<uint32_t>(value.size());
    if (dom.text.size() + value.size() > UINT32_MAX)
      context_.fail(n.line, "", "one object holds more than 4 GiB of text; no Kubernetes object does");
    dom.text.append(value);
    return at;
  }

  void remember(Dom& dom, const yaml_char_t* anchor, uint32_t node) {
    if (anchor) store(dom, reinterpret_cast<const char*>(anchor), node);
  }

  // A copy of the subtree at `node` (nodes node..end, contiguous).
  void store(const Dom& dom, const std::string& anchor, uint32_t node) {
    Anchored copy;
    const uint32_t end = static_cast<uint32_t>(dom.nodes.size());
    uint32_t text_base = UINT32_MAX, text_end = 0;
    for (uint32_t i = node; i < end; ++i)
      if (dom.nodes[i].shape == Shape::Text) {
        text_base = std::min(text_base, dom.nodes[i].text_at);
        text_end = std::max(text_end, dom.nodes[i].text_at + dom.nodes[i].text_size);
      }
    if (text_base == UINT32_MAX) text_base = text_end = 0;
    copy.text = dom.text.substr(text_base, text_end - text_base);
    for (uint32_t i = node; i < end; ++i) {
      DomNode n = dom.nodes[i];
      if (n.first_child != kNone) n.first_child -= node;
      n.next = (i == node || n.next == kNone) ? kNone : n.next - node;
      if (n.shape == Shape::Text) n.text_at -= text_base;
      copy.nodes.push_back(n);
    }
    anchors_[anchor] = std::move(copy);
  }

  uint32_t paste(Dom& dom, const yaml_event_t& e) {
    const std::string name = reinterpret_cast<const char*>(e.data.alias.anchor);
    const auto it = anchors_.find(name);
    if (it == anchors_.end())
      context_.fail(line_of(e), "",
                    fmt::format("YAML syntax error: the alias *{} names no anchor before it", name));
    const Anchored& a = it->second;
    const uint32_t base = static_cast<uint32_t>(dom.nodes.size());
    const uint32_t text_base = static_cast<uint32_t>(dom.text.size());
    for (const DomNode& from : a.nodes) {
      add(dom);
      DomNode n = from;
      if (n.first_child != kNone) n.first_child += base;
      if (n.next != kNone) n.next += base;
      if (n.shape == Shape::Text) n.text_at += text_base;
      dom.nodes.back() = n;
    }
    dom.text.append(a.text);
    return base;
  }

  YamlEvents& events_;
  const TextContext& context_;
  size_t budget_, max_depth_;
  size_t created_ = 0;
  std::map<std::string, Anchored> anchors_;
  UniqueKeys keys_;
};

class DomValue {
 public:
  DomValue(const Dom& dom, uint32_t node) : dom_(dom), node_(node) {}
  Shape shape() const { return n().shape; }
  Position at() const { return n().line; }
  Scalar scalar() const {
    Scalar s;
    s.kind = kind_of(n().shape);
    s.at = n().line;
    if (n().shape == Shape::Text) {
      s.quoted = n().quoted;
      s.text.assign(dom_.text_of(n()));
    }
    return s;
  }
  template <class F>
  void fields(F visit) const {
    for (uint32_t k = n().first_child; k != kNone;) {
      const uint32_t v = dom_.nodes[k].next;
      const DomNode& key = dom_.nodes[k];
      DomValue value(dom_, v);
      visit(key.shape == Shape::Text ? dom_.text_of(key) : std::string_view(), Position{key.line}, value);
      k = dom_.nodes[v].next;
    }
  }
  template <class F>
  void items(F visit) const {
    size_t i = 0;
    for (uint32_t c = n().first_child; c != kNone; c = dom_.nodes[c].next) {
      DomValue item(dom_, c);
      visit(i++, item);
    }
  }
  void skip() const {}
  std::string member_text(std::string_view key) const {
    std::string out;
    if (shape() != Shape::Mapping) return out;
    fields([&](std::string_view k, Position, const DomValue& v) {
      if (k == key && v.shape() == Shape::Text) out = std::string(dom_.text_of(v.n()));
    });
    return out;
  }

 private:
  const DomNode& n() const { return dom_.nodes[node_]; }
  const Dom& dom_;
  uint32_t node_;
};

void read_tree(const Dom& dom, uint32_t node, const std::string& inherited, const TextContext& context,
               const ObjectVisitor& visit) {
  DomValue object(dom, node);
  std::string kind = object.member_text("kind");
  if (kind.empty()) kind = inherited;
  auto decoded =
      decode_object(object, std::move(kind), object.member_text("apiVersion"), object.at(), context);
  if (decoded) visit(std::move(*decoded), context);
}

bool null_scalar(const yaml_event_t& e) {
  if (e.type != YAML_SCALAR_EVENT) return false;
  const auto& s = e.data.scalar;
  const std::string_view v(reinterpret_cast<const char*>(s.value), s.length);
  return !s.tag && s.style == YAML_PLAIN_SCALAR_STYLE &&
         (v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL");
}

}  // namespace

ListInfo read_yaml(const KubeText& text, const ObjectVisitor& visit, const ReadOptions& options) {
  const TextContext context(text.source(), nullptr, options.count_lines);
  YamlEvents events(text, context);
  // The old reader's bound: a text without aliases has fewer nodes than bytes.
  const size_t budget = 4 * text.text().size() + 1024;
  ListInfo info;
  Dom top, item;
  for (;;) {
    const yaml_event_t& e = events.next();
    if (e.type == YAML_STREAM_END_EVENT) break;
    if (e.type != YAML_DOCUMENT_START_EVENT) continue;
    TreeBuilder builder(events, context, budget, options.max_depth);
    const yaml_event_t& root = events.next();
    if (null_scalar(root)) {
      events.next();  // DOCUMENT_END
      continue;
    }
    if (root.type != YAML_MAPPING_START_EVENT)
      context.fail(line_of(root), "", "a document must be a Kubernetes object (a mapping)");
    // The top level: its own keys into `top`, the items of a list streamed.
    top.clear();
    top.nodes.push_back({Shape::Mapping, false, static_cast<uint32_t>(line_of(root)), 0, 0, kNone, kNone});
    uint32_t last = kNone;
    bool list = false;
    Position items_at = kNoPosition;
    std::string list_kind;
    for (;;) {
      const yaml_event_t& key = events.next();
      if (key.type == YAML_MAPPING_END_EVENT) break;
      const bool is_items = key.type == YAML_SCALAR_EVENT &&
                            std::string_view(reinterpret_cast<const char*>(key.data.scalar.value),
                                             key.data.scalar.length) == "items";
      const uint32_t key_node = builder.build(top);
      if (last == kNone)
        top.nodes[0].first_child = key_node;
      else
        top.nodes[last].next = key_node;
      const yaml_event_t& value = events.next();
      if (is_items && value.type == YAML_SEQUENCE_START_EVENT) {
        // Kept as a null in `top`, so a second `items` is still a duplicate.
        list = true;
        items_at = line_of(value);
        top.nodes.push_back({Shape::Null, false, static_cast<uint32_t>(items_at), 0, 0, kNone, kNone});
        const uint32_t placeholder = static_cast<uint32_t>(top.nodes.size() - 1);
        top.nodes[key_node].next = placeholder;
        last = placeholder;
        list_kind = DomValue(top, 0).member_text("kind");
        const std::string inherited = item_kind_of(list_kind, options);
        for (;;) {
          const yaml_event_t& next = events.next();
          if (next.type == YAML_SEQUENCE_END_EVENT) break;
          const size_t item_start = next.start_mark.index;
          item.clear();
          const uint32_t node = builder.build(item);
          if (item.nodes[node].shape != Shape::Mapping)
            context.fail(item.nodes[node].line, "items[]", "must be a Kubernetes object");
          read_tree(item, node, inherited, context, visit);
          // The items before this one are done with: their text may go.
          text.release_before(item_start);
        }
        continue;
      }
      if (is_items) items_at = line_of(value);
      const uint32_t value_node = builder.build(top);
      top.nodes[key_node].next = value_node;
      last = value_node;
    }
    builder.unique_keys(top, 0);
    events.next();  // DOCUMENT_END
    const DomValue document(top, 0);
    if (list) {
      info.kind = document.member_text("kind");
      document.fields([&](std::string_view k, Position, const DomValue& v) {
        if (k == "metadata" && v.shape() == Shape::Mapping) {
          info.resource_version = v.member_text("resourceVersion");
          info.continue_token = v.member_text("continue");
        }
      });
      continue;
    }
    if (items_at != kNoPosition && is_list_kind(document.member_text("kind")))
      context.fail(items_at, "items", "must be a list");
    read_tree(top, 0, options.default_kind, context, visit);
  }
  return info;
}

}  // namespace gpuslice::core::codec::detail

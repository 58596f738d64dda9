// The one reader of Kubernetes objects: kubectl dumps (`get nodes,pods -A
// -o json` / `-o yaml`), manifests, the API server's list pages and watch
// events all go through here, from bytes straight to kube_objects.hpp's
// decoded form, one object at a time. JSON is read with simdjson's On-Demand
// API (the fields gpuslice reads are decoded, the rest walked and checked);
// YAML with libyaml's event parser, each object gathered into a small tree of
// its own and dropped once decoded (docs/architecture.md says why libyaml).
// Errors name the file, the line and the field: `file:line: field: what`;
// lines are counted only when something asks for one.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "gpuslice/core/codec/kube_objects.hpp"
#include "gpuslice/core/codec/text_file.hpp"

namespace gpuslice::core::codec {

// The bytes of one read, followed by the zeroed room simdjson reads ahead into.
class KubeText {
 public:
  // The whole file; an InputError as read_text_file's when it cannot be read.
  // A large file is mapped, not copied (see release_before).
  static KubeText from_file(const std::string& path, const NamedAt* named_at = nullptr);
  // A copy of text already in memory, named `source` in errors.
  static KubeText from_string(std::string_view text, std::string source);

  std::string_view text() const { return {data_.get(), size_}; }
  const std::string& source() const { return source_; }
  size_t capacity() const { return size_ + kPadding; }
  static constexpr size_t kPadding = 64;  // simdjson::SIMDJSON_PADDING

  // The reader has moved past `offset` (a dump's items are read in order):
  // a mapped file's pages before it leave the process's memory, so a big
  // dump's text does not stay resident beside the objects decoded from it.
  // The text is unchanged: a page read again comes back from the file.
  // Nothing for text copied into memory.
  void release_before(size_t offset) const;

 private:
  struct Release {
    size_t mapped_bytes = 0;  // 0: a heap copy
    void operator()(char* data) const;
  };
  KubeText(size_t size, std::string source);
  KubeText(char* mapped, size_t mapped_bytes, size_t size, std::string source);
  std::unique_ptr<char, Release> data_;
  size_t size_ = 0;
  std::string source_;
  mutable size_t released_ = 0;  // bytes at the start already released
};

// Where the object being handed over came from. Valid during the visit only.
class ReadContext {
 public:
  virtual ~ReadContext() = default;
  virtual const std::string& source() const = 0;
  // The line of a position in this read (0: kNoPosition, or an object given without text).
  virtual int line_of(Position at) const = 0;
  // The object as written, for JSON sources (empty for YAML): for tools that keep whole objects.
  virtual std::string_view raw_object() const = 0;
  // Throws InputError(source, line_of(at), field, what).
  [[noreturn]] void fail(Position at, const std::string& field, const std::string& what) const;
};

using ObjectVisitor = std::function<void(KubeObject&& object, const ReadContext& context)>;

struct ReadOptions {
  // The kind of an object that names none when its list does not either (an
  // API server's list items and watch objects carry no kind: "Pod").
  std::string default_kind;
  // simdjson's and the YAML reader's bound on nesting: no Kubernetes object comes near.
  size_t max_depth = 256;
  // False for text made in memory (an object from the API, dumped): errors
  // then name no line.
  bool count_lines = true;
};

// What a top-level list said of itself (the API's paging).
struct ListInfo {
  std::string kind;              // "List", "PodList", ... ("" when the text held no list)
  std::string resource_version;  // metadata.resourceVersion
  std::string continue_token;    // metadata.continue
};

// Every object in `text`, in order: JSON (one object, or a list) or YAML (a
// stream of documents, each one object or a list). A document whose `items`
// is a list is a list, as Kubernetes reads one (kind List, PodList, ...);
// an item without a kind takes its list's kind less "List" when the list
// names it before its items, else options.default_kind. Pods, Nodes,
// Koordinator Devices, PodDisruptionBudgets and ResourceQuotas are decoded and handed to
// `visit`; other kinds are checked as text and skipped. Throws InputError.
ListInfo read_kube_objects(const KubeText& text, const ObjectVisitor& visit, const ReadOptions& options = {});

// The same, kept by kind (small inputs: manifests, tests).
KubeObjects read_all_kube_objects(const KubeText& text, const ReadOptions& options = {});

// One line of an API watch stream: {"type": "ADDED", "object": {...}}.
struct WatchEvent {
  std::string type;                  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
  std::optional<KubeObject> object;  // decoded (options.default_kind when it names none); not for ERROR
  std::string resource_version;      // object.metadata.resourceVersion
  int64_t status_code = 0;           // ERROR: the Status's code (410: the version is too old)
  std::string raw_object;            // the object as sent
};
// Throws InputError naming `line.source()` when the line is not such an event.
WatchEvent read_watch_event(const KubeText& line, const ReadOptions& options = {});

}  // namespace gpuslice::core::codec

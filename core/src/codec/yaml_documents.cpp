#include "gpuslice/core/codec/yaml_documents.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <map>
#include <sstream>

#include "gpuslice/core/errors.hpp"

namespace gpuslice::core::codec {

namespace {

// Remembers where the parser last was, so a runaway stream is reported at
// the line it got stuck on.
class LastMark : public YAML::EventHandler {
 public:
  YAML::Mark mark = YAML::Mark::null_mark();
  void OnDocumentStart(const YAML::Mark& m) override { mark = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { mark = m; }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { mark = m; }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override {
    mark = m;
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    mark = m;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    mark = m;
  }
  void OnMapEnd() override {}
};

int line_of(const YAML::Mark& m) { return m.line >= 0 ? m.line + 1 : 0; }

[[noreturn]] void syntax_error(const std::string& source, const YAML::Mark& m, const std::string& msg) {
  throw InputError(source, line_of(m), "", "YAML syntax error: " + msg);
}

// A well-formed stream has at most one document per byte (plus an empty
// one); more means the parser stopped consuming input.
void check_parser_terminates(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  LastMark handler;
  size_t documents = 0;
  while (parser.HandleNextDocument(handler)) {
    if (++documents > text.size() + 1)
      syntax_error(source, handler.mark, "the stream does not parse (malformed near here)");
  }
}

// yaml-cpp keeps the first of two equal keys and drops the second without a
// word; YAML 1.2 says keys are unique, so a repeated one is refused. The walk
// is iterative (deep nesting must not overflow the stack) and bounded: a file
// without aliases has fewer nodes than bytes, so many more visits mean
// aliases expanding without end (an "alias bomb"), refused as well.
void check_unique_keys(const YAML::Node& root, size_t text_size, const std::string& source) {
  std::vector<YAML::Node> stack{root};
  const size_t limit = 4 * text_size + 1024;
  size_t visits = 0;
  while (!stack.empty()) {
    const YAML::Node n = stack.back();
    stack.pop_back();
    if (++visits > limit)
      throw InputError(source, line_of(n.Mark()), "",
                       "the document expands to too many nodes (aliases repeated without end?)");
    if (n.IsSequence()) {
      for (const auto& item : n) stack.push_back(item);
      continue;
    }
    if (!n.IsMap()) continue;
    std::map<std::string, int> keys;
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (it->first.IsScalar()) {
        const int line = line_of(it->first.Mark());
        auto [at, fresh] = keys.emplace(it->first.Scalar(), line);
        if (!fresh)
          throw InputError(
              source, line, it->first.Scalar(),
              fmt::format("duplicate key (first at line {}); YAML keys must be unique", at->second));
      }
      stack.push_back(it->second);
    }
  }
}

}  // namespace

std::vector<YAML::Node> load_yaml_documents(std::string_view text, const std::string& source) {
  const std::string owned(text);
  std::vector<YAML::Node> docs;
  try {
    check_parser_terminates(owned, source);
    docs = YAML::LoadAll(owned);
  } catch (const YAML::Exception& e) {
    syntax_error(source, e.mark, e.msg);
  }
  for (const auto& d : docs) check_unique_keys(d, owned.size(), source);
  return docs;
}

YAML::Node load_yaml_document(std::string_view text, const std::string& source) {
  auto docs = load_yaml_documents(text, source);
  return docs.empty() ? YAML::Node() : docs.front();
}

}  // namespace gpuslice::core::codec

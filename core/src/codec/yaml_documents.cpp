#include "gpuslice/core/codec/yaml_documents.hpp"

#include <yaml-cpp/eventhandler.h>

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

}  // namespace

std::vector<YAML::Node> load_yaml_documents(std::string_view text, const std::string& source) {
  const std::string owned(text);
  try {
    check_parser_terminates(owned, source);
    return YAML::LoadAll(owned);
  } catch (const YAML::Exception& e) {
    syntax_error(source, e.mark, e.msg);
  }
}

YAML::Node load_yaml_document(std::string_view text, const std::string& source) {
  auto docs = load_yaml_documents(text, source);
  return docs.empty() ? YAML::Node() : docs.front();
}

}  // namespace gpuslice::core::codec

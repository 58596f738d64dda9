// The YAML parser the one reader uses, chosen by measurement: each Debian
// parser's event stream over the same file, nothing built from it, so the
// figure is the parser's own floor (the reader adds its decoding on top).
//
//   yaml_parsers_bench FILE.yaml [repeats, default 3]
//
// Prints the best wall time of each and its throughput. libfyaml is timed
// only when the build found it (GPUSLICE_HAVE_LIBFYAML).
#include <fmt/format.h>
#include <yaml.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#ifdef GPUSLICE_HAVE_LIBFYAML
#include <libfyaml.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

// libyaml: yaml_parser_parse until the stream ends; returns the event count.
long libyaml_events(const std::string& text) {
  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  long events = 0;
  for (;;) {
    yaml_event_t event;
    if (!yaml_parser_parse(&parser, &event)) {
      fmt::print(stderr, "libyaml: {}\n", parser.problem ? parser.problem : "error");
      break;
    }
    ++events;
    const bool end = event.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&event);
    if (end) break;
  }
  yaml_parser_delete(&parser);
  return events;
}

#ifdef GPUSLICE_HAVE_LIBFYAML
long libfyaml_events(const std::string& text) {
  fy_parse_cfg cfg{};
  cfg.flags = FYPCF_QUIET;
  fy_parser* parser = fy_parser_create(&cfg);
  fy_parser_set_string(parser, text.data(), text.size());
  long events = 0;
  while (fy_event* event = fy_parser_parse(parser)) {
    // A scalar's text is read, as a reader would.
    if (event->type == FYET_SCALAR) {
      size_t len = 0;
      (void)fy_token_get_text(event->scalar.value, &len);
    }
    ++events;
    fy_parser_event_free(parser, event);
  }
  fy_parser_destroy(parser);
  return events;
}
#endif

template <class F>
void time_parser(const char* name, const std::string& text, int repeats, F parse) {
  double best = 1e30;
  long events = 0;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    events = parse(text);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  fmt::print("{:<10} {:>10} events  {:7.2f} s  {:6.1f} MB/s\n", name, events, best,
             static_cast<double>(text.size()) / 1e6 / best);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: yaml_parsers_bench FILE.yaml [repeats]\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    fmt::print(stderr, "yaml_parsers_bench: cannot read {}\n", argv[1]);
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  fmt::print("{}: {:.1f} MB, best of {}\n", argv[1], static_cast<double>(text.size()) / 1e6, repeats);
  time_parser("libyaml", text, repeats, libyaml_events);
#ifdef GPUSLICE_HAVE_LIBFYAML
  time_parser("libfyaml", text, repeats, libfyaml_events);
#else
  fmt::print("libfyaml   not found by this build (Debian: libfyaml-dev)\n");
#endif
  return 0;
}

// The one reader of Kubernetes objects (codec/kube_reader.hpp) on the forms
// kubectl and the API server write: `-o json` lists, `-o yaml` lists and
// multi-document streams, block scalars, quoted and plain numbers, nulls,
// kinds gpuslice does not read, and text that is broken or hostile.
#include "gpuslice/core/codec/kube_reader.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpuslice/core/errors.hpp"

using namespace gpuslice::core;
using namespace gpuslice::core::codec;

namespace {

KubeObjects read(const std::string& text, const std::string& source = "dump",
                 const ReadOptions& options = {}) {
  return read_all_kube_objects(KubeText::from_string(text, source), options);
}

// The refusal's words, or "" when the text was read.
std::string refusal(const std::string& text, const std::string& source = "dump") {
  try {
    read(text, source);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string value_of(const StringMap& map, std::string_view key) {
  const Entry* e = map.find(key);
  return e ? e->value.text : "<absent>";
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What a test compares of a pod: everything HAMi's view reads.
std::string summary(const PodObject& p) {
  std::string s = p.header.kind + " " + p.header.meta.namespace_name.text + "/" + p.header.meta.name.text +
                  " node=" + p.node_name.text + " phase=" + p.phase.text;
  for (const auto& e : p.header.meta.annotations.entries) s += " a:" + e.key + "=" + e.value.text;
  for (const auto& c : p.containers) {
    s += " c:" + c.name.text;
    for (const auto& e : c.limits.entries) s += " l:" + e.key + "=" + e.value.text;
    for (const auto& e : c.requests.entries) s += " r:" + e.key + "=" + e.value.text;
  }
  return s;
}

std::string summary(const NodeObject& n) {
  std::string s = n.header.kind + " " + n.header.meta.name.text + " unschedulable=" + n.unschedulable.text;
  for (const auto& e : n.header.meta.annotations.entries) s += " a:" + e.key + "=" + e.value.text;
  for (const auto& e : n.allocatable.entries) s += " al:" + e.key + "=" + e.value.text;
  return s;
}

}  // namespace

TEST_CASE("kubectl's -o json and -o yaml of one cluster decode to the same objects", "[codec][kube_reader]") {
  const std::string dir = std::string(GPUSLICE_TEST_DATA) + "/../../cli/data/";
  const KubeObjects json = read_all_kube_objects(KubeText::from_file(dir + "kubectl-cluster.json"));
  const KubeObjects yaml = read_all_kube_objects(KubeText::from_file(dir + "kubectl-cluster.yaml"));
  REQUIRE(json.nodes.size() == yaml.nodes.size());
  REQUIRE(json.pods.size() == yaml.pods.size());
  REQUIRE_FALSE(json.nodes.empty());
  REQUIRE_FALSE(json.pods.empty());
  for (size_t i = 0; i < json.nodes.size(); ++i) CHECK(summary(json.nodes[i]) == summary(yaml.nodes[i]));
  for (size_t i = 0; i < json.pods.size(); ++i) CHECK(summary(json.pods[i]) == summary(yaml.pods[i]));
  // Items of a kubectl list name their kind; both forms give each object's own line.
  for (size_t i = 0; i < json.pods.size(); ++i) {
    CHECK(json.pods[i].header.line > 1);
    CHECK(yaml.pods[i].header.line > 1);
  }
}

TEST_CASE("a v1 List's items without a kind take the list's - other kinds are skipped",
          "[codec][kube_reader]") {
  const std::string text =
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"77","continue":"tok"},
"items":[{"metadata":{"name":"a","namespace":"ml"},"spec":{"containers":[{"name":"c"}]}}]})";
  std::vector<std::string> kinds;
  const ListInfo info =
      read_kube_objects(KubeText::from_string(text, "page"),
                        [&](KubeObject&& o, const ReadContext&) { kinds.push_back(header_of(o).kind); });
  CHECK(kinds == std::vector<std::string>{"Pod"});
  CHECK(info.kind == "PodList");
  CHECK(info.resource_version == "77");
  CHECK(info.continue_token == "tok");

  // A ConfigMap, a Service and a CRD of any shape are passed over, in JSON and YAML alike.
  const std::string mixed_json = R"({"apiVersion":"v1","kind":"List","items":[
 {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"k":[1,{"deep":[null,true]}]}},
 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}]}},
 {"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}]})";
  const KubeObjects j = read(mixed_json);
  CHECK(j.pods.size() == 1);
  CHECK(j.nodes.empty());
  const std::string mixed_yaml = R"(apiVersion: v1
kind: ConfigMap
metadata: {name: x}
data:
  k: [1, {deep: [~, true]}]
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Service
metadata: {name: s}
spec:
  ports:
  - port: 80
)";
  const KubeObjects y = read(mixed_yaml);
  REQUIRE(y.pods.size() == 1);
  CHECK(y.pods[0].header.meta.name.text == "p");
  CHECK(y.pods[0].header.line == 7);
}

TEST_CASE("a YAML stream mixes lists, lone objects, empty documents and comments", "[codec][kube_reader]") {
  const std::string text = R"(# kubectl get nodes -o yaml; kubectl get pod p -o yaml
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: n1
---
---
# nothing but a comment
...
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: default
spec:
  nodeName: n1
  containers:
  - name: main
)";
  const KubeObjects o = read(text);
  REQUIRE(o.nodes.size() == 1);
  REQUIRE(o.pods.size() == 1);
  CHECK(o.nodes[0].header.meta.name.text == "n1");
  CHECK(o.nodes[0].header.line == 6);
  CHECK(o.pods[0].node_name.text == "n1");
  CHECK(o.pods[0].header.line == 15);
}

TEST_CASE("block scalars, quoting and plain numbers keep the text as written", "[codec][kube_reader]") {
  // HAMi's registration annotation written as kubectl would never write it,
  // but as a person may: a literal block, a folded block and quoted numbers.
  const std::string yaml = R"(apiVersion: v1
kind: Node
metadata:
  name: n
  annotations:
    literal: |
      GPU-0,10,81920,100,NVIDIA-A100,0,true:
      GPU-1,10,81920,100,NVIDIA-A100,0,true:
    folded: >-
      a
      b
    single: 'it''s'
    double: "tab\there"
status:
  allocatable:
    nvidia.com/gpu: 8
    cpu: "64"
    memory: 1.5e3Mi
    exp: 4e3
)";
  const KubeObjects y = read(yaml);
  REQUIRE(y.nodes.size() == 1);
  const NodeObject& n = y.nodes[0];
  CHECK(value_of(n.header.meta.annotations, "literal") ==
        "GPU-0,10,81920,100,NVIDIA-A100,0,true:\nGPU-1,10,81920,100,NVIDIA-A100,0,true:\n");
  CHECK(value_of(n.header.meta.annotations, "folded") == "a b");
  CHECK(value_of(n.header.meta.annotations, "single") == "it's");
  CHECK(value_of(n.header.meta.annotations, "double") == "tab\there");
  const Entry* gpus = n.allocatable.find("nvidia.com/gpu");
  const Entry* cpu = n.allocatable.find("cpu");
  REQUIRE(gpus);
  REQUIRE(cpu);
  CHECK(gpus->value.text == "8");
  CHECK_FALSE(gpus->value.quoted);
  CHECK(cpu->value.text == "64");
  CHECK(cpu->value.quoted);
  CHECK(value_of(n.allocatable, "exp") == "4e3");

  // The same node in JSON: numbers keep their spelling, strings are quoted.
  const std::string json = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},
"status":{"allocatable":{"nvidia.com/gpu":8,"cpu":"64","exp":4e3,"big":18446744073709551616}}})";
  const KubeObjects j = read(json);
  REQUIRE(j.nodes.size() == 1);
  const Entry* jg = j.nodes[0].allocatable.find("nvidia.com/gpu");
  REQUIRE(jg);
  CHECK(jg->value.text == "8");
  CHECK_FALSE(jg->value.quoted);
  CHECK(j.nodes[0].allocatable.find("cpu")->value.quoted);
  CHECK(value_of(j.nodes[0].allocatable, "exp") == "4e3");
  CHECK(value_of(j.nodes[0].allocatable, "big") == "18446744073709551616");
}

TEST_CASE("nulls and empty values read as null, not as text", "[codec][kube_reader]") {
  const std::string yaml = R"(apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: null
  annotations: ~
spec:
  nodeName:
  containers:
  - name: c
    resources: {}
  - name: d
    resources:
)";
  const KubeObjects y = read(yaml);
  REQUIRE(y.pods.size() == 1);
  const PodObject& p = y.pods[0];
  CHECK(p.header.meta.labels.kind == Scalar::Kind::Null);
  CHECK(p.header.meta.annotations.kind == Scalar::Kind::Null);
  CHECK(p.node_name.kind == Scalar::Kind::Null);
  CHECK_FALSE(p.node_name.given());
  REQUIRE(p.containers.size() == 2);
  CHECK(p.containers[0].resources_kind == Scalar::Kind::Mapping);
  CHECK(p.containers[1].resources_kind == Scalar::Kind::Null);
  CHECK(p.phase.kind == Scalar::Kind::Absent);

  const KubeObjects j = read(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":null},"spec":{"nodeName":null,"containers":[{"name":"c","resources":null}]}})");
  REQUIRE(j.pods.size() == 1);
  CHECK(j.pods[0].header.meta.labels.kind == Scalar::Kind::Null);
  CHECK(j.pods[0].node_name.kind == Scalar::Kind::Null);
  CHECK(j.pods[0].containers[0].resources_kind == Scalar::Kind::Null);
}

TEST_CASE("truncated dumps are refused naming the file and a line", "[codec][kube_reader]") {
  const std::string dir = std::string(GPUSLICE_TEST_DATA) + "/../../cli/data/";
  for (const char* name : {"kubectl-cluster.json", "kubectl-cluster.yaml"}) {
    const std::string whole = file_text(dir + name);
    // Cut inside the last pod, as a dump interrupted by a dropped connection is.
    for (size_t cut : {whole.size() / 3, whole.size() / 2, whole.size() - 40}) {
      std::string part = whole.substr(0, cut);
      // A YAML cut may end on a whole line and still be YAML: finish it with an open quote.
      if (std::string(name).find("yaml") != std::string::npos) part += "\n  x: \"unterminated";
      const std::string what = refusal(part, "cut.dump");
      INFO(name << " cut at " << cut << ": " << what);
      REQUIRE_FALSE(what.empty());
      CHECK(what.rfind("cut.dump:", 0) == 0);
      const int line = std::atoi(what.c_str() + std::string("cut.dump:").size());
      CHECK(line >= 1);
    }
  }
}

TEST_CASE("structural mistakes name the line and the field", "[codec][kube_reader]") {
  // A list where a mapping belongs, in each syntax.
  CHECK(refusal("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\n\"metadata\":[1,2]}", "p.json")
            .rfind("p.json:2: metadata", 0) == 0);
  CHECK(refusal("apiVersion: v1\nkind: Pod\nmetadata:\n- 1\n", "p.yaml").rfind("p.yaml:4: metadata", 0) == 0);
  // items that is not a list of objects.
  CHECK_FALSE(refusal("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[1]}").empty());
  // Duplicate keys are refused (kubectl never writes them; an edited file may).
  const std::string dup = refusal("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n", "d.yaml");
  CHECK(dup.rfind("d.yaml:5:", 0) == 0);
  // Not JSON after all: a syntax error.
  CHECK(refusal("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", }").rfind("dump:1:", 0) == 0);
}

TEST_CASE("deep nesting is refused with an error, not a stack overflow", "[codec][kube_reader]") {
  for (size_t depth : {300, 100000}) {
    std::string json = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":";
    json += std::string(depth, '[') + std::string(depth, ']') + "}";
    CHECK_FALSE(refusal(json, "deep.json").empty());
    std::string yaml = "apiVersion: v1\nkind: ConfigMap\ndata: ";
    yaml += std::string(depth, '[') + std::string(depth, ']') + "\n";
    CHECK_FALSE(refusal(yaml, "deep.yaml").empty());
  }
  // Nesting within the bound is read.
  std::string ok = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":";
  ok += std::string(100, '[') + std::string(100, ']') + "}";
  CHECK(refusal(ok).empty());
}

TEST_CASE("a watch line decodes its event and refuses what is not one", "[codec][kube_reader]") {
  ReadOptions pods;
  pods.default_kind = "Pod";
  const WatchEvent ev = read_watch_event(
      KubeText::from_string(
          R"({"type":"MODIFIED","object":{"metadata":{"name":"p","resourceVersion":"9"},"spec":{"containers":[{"name":"c"}]},"status":{"phase":"Running"}}})",
          "watch"),
      pods);
  CHECK(ev.type == "MODIFIED");
  CHECK(ev.resource_version == "9");
  REQUIRE(ev.object);
  const auto* p = std::get_if<PodObject>(&*ev.object);
  REQUIRE(p);
  CHECK(p->phase.text == "Running");
  const WatchEvent gone = read_watch_event(
      KubeText::from_string(R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})",
                            "watch"),
      pods);
  CHECK(gone.type == "ERROR");
  CHECK(gone.status_code == 410);
  CHECK_THROWS_AS(read_watch_event(KubeText::from_string("{\"type\":\"ADDED\",\"object\":", "watch"), pods),
                  InputError);
  CHECK_THROWS_AS(read_watch_event(KubeText::from_string("[]", "watch"), pods), InputError);
}

TEST_CASE("a 1 GiB line of JSON is read and an error after it names line 1", "[codec][kube_reader][large]") {
  // `kubectl get -o json | jq -c` and API pages put a whole cluster on one
  // line. The line here is a ConfigMap's 1 GiB string, skipped, then a pod
  // whose mistake is refused with the line it is on.
  const auto path = std::filesystem::temp_directory_path() / "gpuslice-kube-reader-1g.json";
  {
    std::ofstream out(path, std::ios::binary);
    REQUIRE(out);
    out << R"({"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"blob":")";
    const std::string chunk(1 << 20, 'x');
    for (int i = 0; i < 1024; ++i) out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    out << R"("}},{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}]}},)"
        << R"({"apiVersion":"v1","kind":"Pod","metadata":["not a mapping"]}]})";
    REQUIRE(out);
  }
  std::string what;
  size_t pods_seen = 0;
  try {
    read_kube_objects(KubeText::from_file(path.string()), [&](KubeObject&& o, const ReadContext&) {
      pods_seen += std::holds_alternative<PodObject>(o);
    });
  } catch (const InputError& e) {
    what = e.what();
  }
  std::filesystem::remove(path);
  CHECK(pods_seen == 1);
  CHECK(what.rfind(path.string() + ":1: metadata", 0) == 0);
}

TEST_CASE("each object's line is counted right across short, long and blank lines", "[codec][kube_reader]") {
  // Lines of every length around the eight bytes the counter takes at once.
  std::string text = "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n";
  std::vector<int> want;
  for (int i = 0; i < 40; ++i) {
    text += std::string(static_cast<size_t>(i % 11), ' ') + "\n" + std::string(static_cast<size_t>(i), '\n');
    want.push_back(1 + static_cast<int>(std::count(text.begin(), text.end(), '\n')));
    text += std::string(i ? "," : "") + "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p" +
            std::to_string(i) + "\"},\n \"spec\": {\"containers\": [{\"name\": \"c\"}]}}";
  }
  text += "]}\n";
  const KubeObjects objects = read(text);
  REQUIRE(objects.pods.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(objects.pods[i].header.line == want[i]);
}

namespace {
// A kubectl-like list of `pods` pods, each with a 400-byte annotation (about
// 20 MB at 40,000: past the size from which files are mapped, not copied);
// the last pod's metadata is `last_metadata` as written.
std::string big_list(bool json, size_t pods, const std::string& last_metadata) {
  const std::string filler(400, 'x');
  std::string out = json ? "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n"
                         : "apiVersion: v1\nkind: List\nitems:\n";
  for (size_t i = 0; i < pods; ++i) {
    const std::string name = "pod-" + std::to_string(i);
    const bool last = i + 1 == pods;
    if (json)
      out += "  {\"apiVersion\": \"v1\", \"kind\": \"Pod\",\n   \"metadata\": " +
             (last ? last_metadata
                   : "{\"name\": \"" + name + "\", \"namespace\": \"ns\", \"annotations\": {\"fill\": \"" +
                         filler + "\"}}") +
             "}" + (last ? "\n" : ",\n");
    else
      out += "- apiVersion: v1\n  kind: Pod\n  metadata:" +
             (last ? " " + last_metadata + "\n"
                   : "\n    name: " + name + "\n    namespace: ns\n    annotations:\n      fill: " + filler +
                         "\n");
  }
  return out + (json ? "]}\n" : "");
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

std::string read_or_refusal(const KubeText& text, size_t& pods, std::string& last_name) {
  try {
    const KubeObjects objects = read_all_kube_objects(text);
    pods = objects.pods.size();
    last_name = objects.pods.empty() ? "" : objects.pods.back().header.meta.name.text;
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("a big dump read from its file (mapped and released as read) decodes as from memory",
          "[codec][kube_reader]") {
  for (const bool json : {true, false}) {
    const std::string good_last =
        json ? R"({"name": "pod-last", "namespace": "ns"})" : "{name: pod-last, namespace: ns}";
    const std::string text = big_list(json, 40000, good_last);
    REQUIRE(text.size() > (16u << 20));
    const std::string path = write_temp(json ? "gpuslice-big-dump.json" : "gpuslice-big-dump.yaml", text);
    size_t file_pods = 0, memory_pods = 0;
    std::string file_last, memory_last;
    const KubeText mapped = KubeText::from_file(path);
    CHECK(read_or_refusal(mapped, file_pods, file_last).empty());
    CHECK(read_or_refusal(KubeText::from_string(text, path), memory_pods, memory_last).empty());
    CHECK(file_pods == 40000);
    CHECK(file_pods == memory_pods);
    CHECK(file_last == "pod-last");
    CHECK(file_last == memory_last);
    // The released pages come back from the file: the text is unchanged.
    mapped.release_before(text.size());
    CHECK(mapped.text() == text);
    // A mistake in the last pod is named at the same line both ways (the
    // line count reads the text the read has released).
    const std::string bad = big_list(json, 40000, json ? "5" : "5");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bad;
    size_t unused = 0;
    std::string unused_name;
    const std::string from_file = read_or_refusal(KubeText::from_file(path), unused, unused_name);
    const std::string from_memory = read_or_refusal(KubeText::from_string(bad, path), unused, unused_name);
    CHECK_FALSE(from_file.empty());
    CHECK(from_file == from_memory);
    std::filesystem::remove(path);
  }
}

// JSON strings are scanned eight bytes at a time: escapes, quotes, UTF-8 and
// control characters on either side of an eight-byte boundary read as one
// byte at a time would.
TEST_CASE("JSON strings read alike whatever their length and where an escape falls", "[codec][kube_reader]") {
  const std::string json =
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n","annotations":{)"
      R"("at8":"abcdefgh\"ij","len16":"0123456789abcdef","len8":"01234567","at7":"1234567\n",)"
      R"("u":"\u00e9tant long enough","utf8":"Gr\u00fc\u00dfe aus M)"
      "\xc3\xbc"
      R"(nchen, GPU-0","long-key-name\u0041":"v","":"empty key"}}})";
  const KubeObjects j = read(json);
  REQUIRE(j.nodes.size() == 1);
  const StringMap& a = j.nodes[0].header.meta.annotations;
  CHECK(value_of(a, "at8") == "abcdefgh\"ij");
  CHECK(value_of(a, "len16") == "0123456789abcdef");
  CHECK(value_of(a, "len8") == "01234567");
  CHECK(value_of(a, "at7") == "1234567\n");
  CHECK(value_of(a, "u") == "\xc3\xa9tant long enough");
  CHECK(value_of(a, "utf8") ==
        "Gr\xc3\xbc\xc3\x9f"
        "e aus M\xc3\xbcnchen, GPU-0");
  CHECK(value_of(a, "long-key-nameA") == "v");
  CHECK(value_of(a, "") == "empty key");

  const std::string head = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")";
  CHECK_THAT(refusal(head + "0123456789a\tb\"}}"), Catch::Contains("must be escaped"));
  CHECK_THAT(refusal(head + "012345678\\qx\"}}"), Catch::Contains("unknown escape"));
  CHECK_THAT(refusal(head + "0123456789\\u12g4\"}}"), Catch::Contains("four hex digits"));
}

#include "api_double.hpp"

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "base64.hpp"

namespace gpuslice::serve::testing {

using nlohmann::json;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("api double: cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string pod_key(const std::string& ns, const std::string& name) { return ns + "/" + name; }
std::string pod_key(const json& pod) {
  return pod_key(pod["metadata"].value("namespace", "default"), pod["metadata"]["name"].get<std::string>());
}

}  // namespace

ApiDouble::ApiDouble(const std::string& data_dir, std::string token)
    : data_dir_(data_dir), token_(std::move(token)) {
  const json nodes = json::parse(read_file(data_dir_ + "/nodes.json"));
  const json pods = json::parse(read_file(data_dir_ + "/pods.json"));
  for (const auto& n : nodes["items"]) nodes_[n["metadata"]["name"].get<std::string>()] = n;
  for (const auto& p : pods["items"]) pods_[pod_key(p)] = p;
  rv_ = std::stoull(pods["metadata"]["resourceVersion"].get<std::string>());
  oldest_rv_ = 1;
  routes();
  server_.set_keep_alive_timeout(1);
  port_ = server_.bind_to_any_port("127.0.0.1");
  if (port_ <= 0) throw std::runtime_error("api double: cannot bind a loopback port");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  for (int i = 0; i < 500 && !server_.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

ApiDouble::~ApiDouble() {
  stopping_ = true;
  changed_.notify_all();
  server_.stop();
  if (thread_.joinable()) thread_.join();
}

bool ApiDouble::authorised(const httplib::Request& req, httplib::Response& res) const {
  if (req.get_header_value("Authorization") == "Bearer " + token_) return true;
  status(res, "status_unauthorized.json", 401, {});
  return false;
}

void ApiDouble::status(httplib::Response& res, const std::string& fixture, int code,
                       const std::vector<std::pair<std::string, std::string>>& fill) const {
  std::string body = read_file(data_dir_ + "/" + fixture);
  for (const auto& [from, to] : fill) body = replace_all(body, from, to);
  res.status = code;
  res.set_content(body, "application/json");
}

uint64_t ApiDouble::bump(json& object, const std::string& resource, const std::string& type) {
  const uint64_t rv = ++rv_;
  object["metadata"]["resourceVersion"] = std::to_string(rv);
  emit(resource, type, object, rv);
  return rv;
}

void ApiDouble::emit(const std::string& resource, const std::string& type, const json& object, uint64_t rv) {
  json obj = object;
  obj["apiVersion"] = "v1";
  obj["kind"] = resource == "nodes" ? "Node" : resource == "pods" ? "Pod" : "ResourceQuota";
  history_.push_back({rv, resource, json{{"type", type}, {"object", obj}}.dump()});
  changed_.notify_all();
}

std::string ApiDouble::field_selector(const std::string& resource) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = field_selectors_.find(resource);
  return it == field_selectors_.end() ? "" : it->second;
}

void ApiDouble::add_pod(json pod) {
  std::lock_guard<std::mutex> lock(mutex_);
  bump(pod, "pods", "ADDED");
  pods_[pod_key(pod)] = pod;
}

void ApiDouble::delete_pod(const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = pods_.find(pod_key(ns, name));
  if (it == pods_.end()) return;
  json pod = it->second;
  pods_.erase(it);
  bump(pod, "pods", "DELETED");
}

void ApiDouble::put_quota(json quota) {
  std::lock_guard<std::mutex> lock(mutex_);
  serve_quotas_ = true;
  const std::string key = pod_key(quota);
  bump(quota, "resourcequotas", quotas_.count(key) ? "MODIFIED" : "ADDED");
  quotas_[key] = quota;
}

void ApiDouble::delete_quota(const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = quotas_.find(pod_key(ns, name));
  if (it == quotas_.end()) return;
  json quota = it->second;
  quotas_.erase(it);
  bump(quota, "resourcequotas", "DELETED");
}

void ApiDouble::replay_watch_line(const std::string& resource, const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  const json ev = json::parse(line);
  const uint64_t rv = std::stoull(ev["object"]["metadata"]["resourceVersion"].get<std::string>());
  rv_ = std::max(rv_, rv);
  if (ev["type"] == "ADDED" || ev["type"] == "MODIFIED") {
    if (resource == "pods") pods_[pod_key(ev["object"])] = ev["object"];
  }
  history_.push_back({rv, resource, ev.dump()});
  changed_.notify_all();
}

void ApiDouble::bookmark() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const char* resource : {"nodes", "pods"}) {
    const json obj = {{"kind", std::string(resource) == "nodes" ? "Node" : "Pod"},
                      {"apiVersion", "v1"},
                      {"metadata", {{"resourceVersion", std::to_string(rv_)}}}};
    history_.push_back({rv_, resource, json{{"type", "BOOKMARK"}, {"object", obj}}.dump()});
  }
  changed_.notify_all();
}

void ApiDouble::expire_history() {
  std::lock_guard<std::mutex> lock(mutex_);
  history_.clear();
  oldest_rv_ = ++rv_;
  ++drop_generation_;
  changed_.notify_all();
}

void ApiDouble::drop_watches() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++drop_generation_;
  changed_.notify_all();
}

json ApiDouble::pod(const std::string& ns, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = pods_.find(pod_key(ns, name));
  return it == pods_.end() ? json() : it->second;
}

json ApiDouble::node(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = nodes_.find(name);
  return it == nodes_.end() ? json() : it->second;
}

std::vector<json> ApiDouble::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

uint64_t ApiDouble::resource_version() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rv_;
}

int ApiDouble::list_calls(const std::string& resource) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = list_calls_.find(resource);
  return it == list_calls_.end() ? 0 : it->second;
}

int ApiDouble::watch_calls(const std::string& resource) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = watch_calls_.find(resource);
  return it == watch_calls_.end() ? 0 : it->second;
}

void ApiDouble::list(const std::string& resource, const httplib::Request& req, httplib::Response& res) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++list_calls_[resource];
  // Every item in name order; a page ends at `limit` with a continue token
  // (opaque base64 JSON, as the apiserver writes it).
  std::vector<const json*> items;
  const std::string selector = req.has_param("fieldSelector") ? req.get_param_value("fieldSelector") : "";
  field_selectors_[resource] = selector;
  const std::string on_node = selector.rfind("spec.nodeName=", 0) == 0 ? selector.substr(14) : "";
  if (resource == "nodes")
    for (const auto& [k, v] : nodes_) items.push_back(&v);
  else if (resource == "resourcequotas")
    for (const auto& [k, v] : quotas_) items.push_back(&v);
  else
    for (const auto& [k, v] : pods_)
      if (on_node.empty() || v["spec"].value("nodeName", "") == on_node) items.push_back(&v);
  size_t start = 0;
  if (req.has_param("continue")) {
    const auto decoded = base64_decode(req.get_param_value("continue"));
    if (!decoded) {
      status(res, "status_gone.json", 400,
             {{"too old resource version: RV (OLDEST)", "continue key is not valid"}});
      return;
    }
    const json token = json::parse(*decoded);
    if (token["rv"].get<uint64_t>() < oldest_rv_) {
      status(res, "status_gone.json", 410,
             {{"too old resource version: RV (OLDEST)",
               "The provided continue parameter is too old to display a consistent list result."}});
      return;
    }
    start = token["start"].get<size_t>();
  }
  size_t limit = req.has_param("limit") ? std::stoul(req.get_param_value("limit")) : 0;
  const size_t end = limit == 0 ? items.size() : std::min(items.size(), start + limit);
  json list = {{"kind", resource == "nodes"  ? "NodeList"
                        : resource == "pods" ? "PodList"
                                             : "ResourceQuotaList"},
               {"apiVersion", "v1"},
               {"metadata", {{"resourceVersion", std::to_string(rv_)}}},
               {"items", json::array()}};
  for (size_t i = start; i < end; ++i) {
    json item = *items[i];
    item.erase("kind");  // list items carry no type, as the apiserver sends them
    item.erase("apiVersion");
    list["items"].push_back(item);
  }
  if (end < items.size()) {
    list["metadata"]["continue"] =
        base64_encode(json{{"v", "meta.k8s.io/v1"}, {"rv", rv_}, {"start", end}}.dump());
    list["metadata"]["remainingItemCount"] = items.size() - end;
  }
  res.set_content(list.dump(), "application/json");
}

void ApiDouble::watch(const std::string& resource, const httplib::Request& req, httplib::Response& res) {
  uint64_t from = 0;
  uint64_t drop_generation = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++watch_calls_[resource];
    from = req.has_param("resourceVersion") ? std::stoull(req.get_param_value("resourceVersion")) : rv_;
    drop_generation = drop_generation_;
    if (from < oldest_rv_ && gone_as_http_) {
      status(res, "status_gone.json", 410,
             {{"RV", std::to_string(from)}, {"OLDEST", std::to_string(oldest_rv_)}});
      return;
    }
  }
  const int timeout =
      req.has_param("timeoutSeconds") ? std::stoi(req.get_param_value("timeoutSeconds")) : 1800;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  struct Stream {
    uint64_t sent;
    bool gone_sent = false;
  };
  auto stream = std::make_shared<Stream>(Stream{from});
  ++open_watches_;
  res.set_chunked_content_provider(
      "application/json",
      [this, resource, stream, deadline, drop_generation](size_t, httplib::DataSink& sink) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (stream->sent < oldest_rv_ && !stream->gone_sent) {
          // The apiserver answers 200 and then one ERROR event with a 410 Status.
          json st = json::parse(read_file(data_dir_ + "/status_gone.json"));
          st["message"] = "too old resource version: " + std::to_string(stream->sent) + " (" +
                          std::to_string(oldest_rv_) + ")";
          const std::string line = json{{"type", "ERROR"}, {"object", st}}.dump() + "\n";
          sink.write(line.data(), line.size());
          stream->gone_sent = true;
          sink.done();
          return true;
        }
        changed_.wait_for(lock, std::chrono::milliseconds(50));
        if (stopping_ || drop_generation != drop_generation_ ||
            std::chrono::steady_clock::now() >= deadline || !sink.is_writable()) {
          sink.done();
          return true;
        }
        for (const auto& c : history_) {
          if (c.resource != resource || c.rv <= stream->sent) continue;
          // Bookmarks share the version of the last change; send each once.
          const std::string line = c.line + "\n";
          if (!sink.write(line.data(), line.size())) return false;
        }
        for (const auto& c : history_)
          if (c.resource == resource && c.rv > stream->sent) stream->sent = c.rv;
        return true;
      },
      [this](bool) { --open_watches_; });
}

void ApiDouble::routes() {
  server_.Get(R"(/api/v1/(nodes|pods|resourcequotas))",
              [this](const httplib::Request& req, httplib::Response& res) {
                if (!authorised(req, res)) return;
                const std::string resource = req.matches[1];
                if (resource == "resourcequotas") {
                  std::lock_guard<std::mutex> lock(mutex_);
                  if (!serve_quotas_) {
                    status(res, "status_not_found.json", 404, {{"NAME", "resourcequotas"}});
                    return;
                  }
                }
                if (req.has_param("watch") &&
                    (req.get_param_value("watch") == "1" || req.get_param_value("watch") == "true"))
                  watch(resource, req, res);
                else
                  list(resource, req, res);
              });

  auto patch = [this](const std::string& resource, const std::string& key, const std::string& name,
                      const httplib::Request& req, httplib::Response& res) {
    if (!authorised(req, res)) return;
    const std::string type = req.get_header_value("Content-Type");
    if (type != "application/strategic-merge-patch+json" && type != "application/merge-patch+json") {
      res.status = 415;
      res.set_content(json{{"kind", "Status"},
                           {"apiVersion", "v1"},
                           {"metadata", json::object()},
                           {"status", "Failure"},
                           {"message",
                            "the body of the request was in an unknown format - accepted media types "
                            "include: application/json-patch+json, application/merge-patch+json, "
                            "application/apply-patch+yaml, application/strategic-merge-patch+json"},
                           {"reason", "UnsupportedMediaType"},
                           {"code", 415}}
                          .dump(),
                      "application/json");
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto& objects = resource == "nodes" ? nodes_ : pods_;
    auto it = objects.find(key);
    if (it == objects.end()) {
      std::vector<std::pair<std::string, std::string>> fill{{"NAME", name}};
      if (resource == "nodes")
        fill.insert(fill.end(), {{"pods \\\"", "nodes \\\""}, {"\"pods\"", "\"nodes\""}});
      status(res, "status_not_found.json", 404, fill);
      return;
    }
    // Annotations are a map: strategic merge and JSON merge patch agree
    // (a null value deletes the key).
    it->second.merge_patch(json::parse(req.body));
    bump(it->second, resource, "MODIFIED");
    res.set_content(it->second.dump(), "application/json");
  };
  server_.Patch(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+))",
                [patch](const httplib::Request& req, httplib::Response& res) {
                  patch("pods", pod_key(req.matches[1], req.matches[2]), req.matches[2], req, res);
                });
  server_.Patch(R"(/api/v1/nodes/([^/]+))", [patch](const httplib::Request& req, httplib::Response& res) {
    patch("nodes", req.matches[1], req.matches[1], req, res);
  });

  server_.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding)", [this](const httplib::Request& req,
                                                                            httplib::Response& res) {
    if (!authorised(req, res)) return;
    const std::string ns = req.matches[1], name = req.matches[2];
    const json binding = json::parse(req.body);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pods_.find(pod_key(ns, name));
    if (it == pods_.end()) {
      status(res, "status_not_found.json", 404, {{"NAME", name}});
      return;
    }
    json& pod = it->second;
    const std::string uid = binding["metadata"].value("uid", "");
    if (!uid.empty() && uid != pod["metadata"].value("uid", "")) {
      status(res, "status_already_bound.json", 409,
             {{"pod NAME is already assigned to node \\\"NODE\\\"",
               "Precondition failed: UID in precondition: " + uid +
                   ", UID in object meta: " + pod["metadata"].value("uid", "")},
              {"NAME", name}});
      return;
    }
    const std::string bound = pod["spec"].value("nodeName", "");
    if (!bound.empty()) {
      status(res, "status_already_bound.json", 409, {{"NAME", name}, {"NODE", bound}});
      return;
    }
    if (binding.value("kind", "") != "Binding" || binding["target"].value("kind", "") != "Node") {
      res.status = 400;
      res.set_content(
          R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"not a Binding to a Node","reason":"BadRequest","code":400})",
          "application/json");
      return;
    }
    pod["spec"]["nodeName"] = binding["target"]["name"];
    bump(pod, "pods", "MODIFIED");
    status(res, "status_created.json", 201, {});
  });

  server_.Post(R"(/api/v1/namespaces/([^/]+)/events)",
               [this](const httplib::Request& req, httplib::Response& res) {
                 if (!authorised(req, res)) return;
                 json event = json::parse(req.body);
                 std::lock_guard<std::mutex> lock(mutex_);
                 event["metadata"]["namespace"] = std::string(req.matches[1]);
                 event["metadata"]["resourceVersion"] = std::to_string(++rv_);
                 events_.push_back(event);
                 res.status = 201;
                 res.set_content(event.dump(), "application/json");
               });
}

}  // namespace gpuslice::serve::testing

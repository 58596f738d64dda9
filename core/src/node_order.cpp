#include "gpuslice/core/node_order.hpp"

#include <algorithm>

namespace gpuslice::core {

namespace {
constexpr size_t kBlockSplit = 128;  // a block this large splits in two
constexpr int64_t kUntracked = std::numeric_limits<int64_t>::max();
}  // namespace

FreeSummary FreeSummary::of(const NodeView& node) {
  FreeSummary s;
  const auto& cap = node.node->capacity;
  s.host_cpu = cap.cpu_milli > 0 ? cap.cpu_milli - node.host_used.cpu_milli : kUntracked;
  s.host_memory = cap.memory_mib > 0 ? cap.memory_mib - node.host_used.memory_mib : kUntracked;
  for (size_t i = 0; i < node.device_count(); ++i) {
    const auto& d = node.device(i);
    const auto& u = node.usage[i];
    if (!d.healthy || u.slots >= d.slots) continue;
    const int64_t free_mem = d.memory_mib - u.memory_mib;
    s.card_memory = std::max(s.card_memory, free_mem);
    if (d.memory_mib > 0)
      s.card_permille = std::max(
          s.card_permille, static_cast<int32_t>(((free_mem + 1) * 1000 + d.memory_mib - 1) / d.memory_mib));
    s.card_cores = std::max(s.card_cores, d.cores - u.cores);
    ++s.cards_with_slot;
    if (u.slots == 0 || d.cores != 100) ++s.cards_for_whole;
  }
  return s;
}

void FreeSummary::widen(const FreeSummary& o) {
  host_cpu = std::max(host_cpu, o.host_cpu);
  host_memory = std::max(host_memory, o.host_memory);
  card_memory = std::max(card_memory, o.card_memory);
  card_permille = std::max(card_permille, o.card_permille);
  card_cores = std::max(card_cores, o.card_cores);
  cards_with_slot = std::max(cards_with_slot, o.cards_with_slot);
  cards_for_whole = std::max(cards_for_whole, o.cards_for_whole);
}

bool FreeSummary::may_take(const PodRequest& pod) const {
  if (pod.host.cpu_milli > host_cpu || pod.host.memory_mib > host_memory) return false;
  for (size_t c = 0; c < pod.container_count(); ++c) {
    const auto& r = pod.container_at(c);
    if (!r.wants_devices()) continue;
    const int32_t cores = std::min<int32_t>(r.cores, 100);
    if (r.count > cards_with_slot || cores > card_cores) return false;
    if (r.memory_mib > 0 ? r.memory_mib > card_memory
                         : (r.memory_percent != kMemoryPercentUnset && r.memory_percent * 10 > card_permille))
      return false;
    if (cores == 100 && r.count > cards_for_whole) return false;
  }
  return true;
}

bool NodeOrderIndex::Order::before(const Entry& a, const Entry& b) const {
  if (a.key != b.key) return high ? a.key > b.key : a.key < b.key;
  return a.id < b.id;
}

// A summary no pod passes: the identity of widen.
static FreeSummary takes_nothing() {
  FreeSummary s;
  s.host_cpu = s.host_memory = std::numeric_limits<int64_t>::min();
  return s;
}

void NodeOrderIndex::Order::recompute(Block& b, const std::vector<FreeSummary>& summary) {
  b.free = takes_nothing();
  for (const auto& e : b.entries) b.free.widen(summary[e.id]);
}

void NodeOrderIndex::Order::rebuild_tree() {
  leaves = 1;
  while (leaves < blocks.size()) leaves *= 2;
  tree.assign(2 * leaves, takes_nothing());
  for (size_t i = 0; i < blocks.size(); ++i) tree[leaves + i] = blocks[i].free;
  for (size_t n = leaves - 1; n >= 1; --n) {
    tree[n] = tree[2 * n];
    tree[n].widen(tree[2 * n + 1]);
  }
}

void NodeOrderIndex::Order::update_tree(size_t block) {
  size_t n = leaves + block;
  tree[n] = blocks[block].free;
  for (n /= 2; n >= 1; n /= 2) {
    tree[n] = tree[2 * n];
    tree[n].widen(tree[2 * n + 1]);
  }
}

void NodeOrderIndex::Order::build(std::vector<Entry> entries, const std::vector<FreeSummary>& summary) {
  std::sort(entries.begin(), entries.end(), [this](const Entry& a, const Entry& b) { return before(a, b); });
  blocks.clear();
  for (size_t i = 0; i < entries.size(); i += kBlockSplit / 2) {
    Block b;
    b.entries.assign(entries.begin() + static_cast<long>(i),
                     entries.begin() + static_cast<long>(std::min(entries.size(), i + kBlockSplit / 2)));
    recompute(b, summary);
    blocks.push_back(std::move(b));
  }
  rebuild_tree();
}

size_t NodeOrderIndex::Order::block_of(const Entry& e) const {
  // First block whose last entry is not before e.
  size_t lo = 0, hi = blocks.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (before(blocks[mid].entries.back(), e))
      lo = mid + 1;
    else
      hi = mid;
  }
  return std::min(lo, blocks.empty() ? 0 : blocks.size() - 1);
}

void NodeOrderIndex::Order::erase(const Entry& e, const std::vector<FreeSummary>& summary) {
  const size_t bi = block_of(e);
  auto& v = blocks[bi].entries;
  auto it = std::lower_bound(v.begin(), v.end(), e,
                             [this](const Entry& a, const Entry& b) { return before(a, b); });
  if (it == v.end() || it->id != e.id) return;
  v.erase(it);
  if (v.empty()) {
    blocks.erase(blocks.begin() + static_cast<long>(bi));
    rebuild_tree();
  } else {
    recompute(blocks[bi], summary);
    update_tree(bi);
  }
}

void NodeOrderIndex::Order::insert(const Entry& e, const std::vector<FreeSummary>& summary) {
  if (blocks.empty()) {
    blocks.push_back(Block{{e}, {}});
    recompute(blocks.back(), summary);
    rebuild_tree();
    return;
  }
  const size_t bi = block_of(e);
  auto& v = blocks[bi].entries;
  v.insert(std::upper_bound(v.begin(), v.end(), e,
                            [this](const Entry& a, const Entry& b) { return before(a, b); }),
           e);
  if (v.size() >= kBlockSplit) {
    Block tail;
    tail.entries.assign(v.begin() + static_cast<long>(v.size() / 2), v.end());
    v.resize(v.size() / 2);
    recompute(blocks[bi], summary);
    recompute(tail, summary);
    blocks.insert(blocks.begin() + static_cast<long>(bi) + 1, std::move(tail));
    rebuild_tree();
  } else {
    recompute(blocks[bi], summary);
    update_tree(bi);
  }
}

void NodeOrderIndex::Order::refresh(const Entry& e, const std::vector<FreeSummary>& summary) {
  const size_t bi = block_of(e);
  recompute(blocks[bi], summary);
  update_tree(bi);
}

void NodeOrderIndex::sync(const Cluster& cluster, const KeyRanking& ranking, int sign) {
  if (cluster_ != &cluster || ranking_ != &ranking || epoch_ != cluster.epoch() ||
      key_.size() != cluster.size() || seen_changes_ > cluster.change_count() ||
      seen_changes_ < cluster.first_change()) {
    high_first_.active = low_first_.active = false;
    rebuild(cluster, ranking);
  }
  for (; seen_changes_ < cluster.change_count(); ++seen_changes_)
    update(cluster, ranking, cluster.changed_node(seen_changes_));
  Order& order = sign >= 0 ? high_first_ : low_first_;
  if (!order.active) {
    std::vector<Entry> entries(key_.size());
    for (size_t id = 0; id < key_.size(); ++id) entries[id] = {key_[id], static_cast<uint32_t>(id)};
    order.build(std::move(entries), summary_);
    order.active = true;
  }
}

void NodeOrderIndex::rebuild(const Cluster& cluster, const KeyRanking& ranking) {
  cluster_ = &cluster;
  ranking_ = &ranking;
  epoch_ = cluster.epoch();
  seen_changes_ = cluster.change_count();
  key_.resize(cluster.size());
  summary_.resize(cluster.size());
  for (size_t id = 0; id < cluster.size(); ++id) {
    const NodeView view = cluster.view(id);
    key_[id] = ranking.node_key(view);
    summary_[id] = FreeSummary::of(view);
  }
}

void NodeOrderIndex::update(const Cluster& cluster, const KeyRanking& ranking, uint32_t id) {
  const NodeView view = cluster.view(id);
  const double key = ranking.node_key(view);
  summary_[id] = FreeSummary::of(view);
  const Entry old_entry{key_[id], id}, new_entry{key, id};
  key_[id] = key;
  for (Order* order : {&high_first_, &low_first_}) {
    if (!order->active) continue;
    if (key == old_entry.key) {
      order->refresh(old_entry, summary_);
    } else {
      order->erase(old_entry, summary_);
      order->insert(new_entry, summary_);
    }
  }
}

}  // namespace gpuslice::core

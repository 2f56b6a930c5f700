// The in-process group: ranks are threads that meet at a generation barrier.
// Each operation deposits every rank's tensor, the last arrival combines them,
// and every rank copies the result out before the slot is reused.
#include <condition_variable>
#include <mutex>

#include "device_check.hpp"
#include "lrkit/distributed/collective.hpp"

namespace lrkit::distributed {

namespace {

class Rendezvous {
 public:
  explicit Rendezvous(int ranks) : ranks_(ranks), slots_(static_cast<size_t>(ranks)) {}

  // Deposits `tensor` for `rank`, waits for all ranks, lets the last arrival
  // run `combine` over every deposit, and returns the combined result.
  template <typename Combine>
  torch::Tensor exchange(int rank, const torch::Tensor& tensor, Combine combine) {
    std::unique_lock<std::mutex> lock(mutex_);
    // A rank may not deposit into a round whose result others are still reading.
    ready_.wait(lock, [&] { return readers_ == 0; });
    slots_[static_cast<size_t>(rank)] = tensor;
    const uint64_t round = round_;
    if (++arrived_ == ranks_) {
      result_ = combine(slots_);
      arrived_ = 0;
      readers_ = ranks_;
      ++round_;
      ready_.notify_all();
    } else {
      ready_.wait(lock, [&] { return round_ != round; });
    }
    torch::Tensor out = result_;
    if (--readers_ == 0) {
      for (auto& s : slots_) s = torch::Tensor();
      ready_.notify_all();
    }
    return out;
  }

 private:
  const int ranks_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<torch::Tensor> slots_;
  torch::Tensor result_;
  int arrived_ = 0, readers_ = 0;
  uint64_t round_ = 0;
};

class ThreadRank final : public Collective {
 public:
  ThreadRank(std::shared_ptr<Rendezvous> rendezvous, int rank, int world, torch::Device device)
      : rendezvous_(std::move(rendezvous)), rank_(rank), world_(world), device_(device) {}
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  torch::Device device() const override { return device_; }

  void all_reduce_sum(torch::Tensor& tensor) override {
    check_device(*this, tensor, "all-reduce");
    const auto sum = rendezvous_->exchange(rank_, tensor.clone(), [](const std::vector<torch::Tensor>& all) {
      auto total = all[0].clone();
      for (size_t i = 1; i < all.size(); ++i) total += all[i];  // rank order: deterministic
      return total;
    });
    tensor.copy_(sum);
  }

  void broadcast(torch::Tensor& tensor, int root) override {
    check_device(*this, tensor, "broadcast");
    const auto value = rendezvous_->exchange(rank_, tensor.clone(), [root](const std::vector<torch::Tensor>& all) {
      return all[static_cast<size_t>(root)].clone();
    });
    tensor.copy_(value);
  }

  torch::Tensor all_gather(const torch::Tensor& local) override {
    check_device(*this, local, "all-gather");
    return rendezvous_->exchange(rank_, local.clone(), [](const std::vector<torch::Tensor>& all) {
      return torch::stack(all);
    }).clone();
  }

  // Threads of one process wait without a limit, as in every operation of this group.
  void barrier(std::chrono::milliseconds, const std::string&) override {
    rendezvous_->exchange(rank_, torch::Tensor(), [](const std::vector<torch::Tensor>&) { return torch::Tensor(); });
  }

 private:
  std::shared_ptr<Rendezvous> rendezvous_;
  int rank_, world_;
  torch::Device device_;
};

}  // namespace

std::vector<std::unique_ptr<Collective>> make_thread_group(int ranks, torch::Device device) {
  if (ranks < 1) throw std::invalid_argument("a thread group needs at least one rank (got " + std::to_string(ranks) + ")");
  auto rendezvous = std::make_shared<Rendezvous>(ranks);
  std::vector<std::unique_ptr<Collective>> group;
  for (int r = 0; r < ranks; ++r) group.push_back(std::make_unique<ThreadRank>(rendezvous, r, ranks, device));
  return group;
}

}  // namespace lrkit::distributed

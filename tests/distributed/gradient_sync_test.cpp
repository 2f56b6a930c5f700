// The cheap consistency measurements against brute force: every rank's full
// gradient gathered and compared pairwise, on a tiny GPT with 2-4 workers of
// an in-process group (the same Collective interface c10d implements).
#include "device_param.hpp"
#include "lrkit/distributed/gradient_sync.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "lrkit/diagnostics/dispersion.hpp"
#include "lrkit/train/byte_corpus.hpp"
#include "lrkit/train/gpt.hpp"
#include "thread_ranks.hpp"

namespace lrkit::distributed {
namespace {

using train::Batch;
using train::Gpt;
using train::GptConfig;
using train::sample_batch;

std::vector<uint8_t> corpus() {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "In the beginning was the Word, and the Word was with God " + std::to_string(i) + ". ";
  return {text.begin(), text.end()};
}

torch::Tensor flat_gradient(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> parts;
  for (const auto& p : parameters) parts.push_back(p.grad().reshape({-1}).to(torch::kCPU).to(torch::kDouble));
  return torch::cat(parts);
}

struct Worker {
  Gpt model{nullptr};
  std::vector<torch::Tensor> parameters;
  double loss = 0;
  torch::Tensor local_gradient;
};

// Identical weights on every rank; each rank's gradient from its own rows
// (or rank 0's rows when `identical_data`).
std::vector<Worker> workers_with_gradients(int ranks, bool identical_data, torch::Device device = torch::kCPU) {
  static const auto tokens = corpus();
  std::vector<Worker> workers(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    auto& w = workers[static_cast<size_t>(r)];
    torch::manual_seed(5);
    w.model = Gpt(GptConfig{256, 16, 1, 2, 16, 0.0});
    w.model->to(device);
    w.parameters = w.model->parameters();
    const Batch b = sample_batch(tokens, identical_data ? 0 : r * 2, 2, 16, {11, 3});
    auto loss = w.model->per_sequence_loss(b.inputs.to(device), b.targets.to(device)).mean();
    loss.backward();
    w.loss = loss.item<double>();
    w.local_gradient = flat_gradient(w.parameters);
  }
  return workers;
}

struct Measured {
  GradientSyncResult sync;
  torch::Tensor sketch, mean_gradient;
};

// Runs synchronize_gradients on every worker's thread with its own rank.
std::vector<Measured> synchronize(std::vector<Worker>& workers, const GradientSyncOptions& options, GradientSketch* sketch) {
  return lrkit::testing::on_thread_ranks<Measured>(
      static_cast<int>(workers.size()),
      [&](size_t r, Collective& group) {
        Measured measured;
        if (sketch) measured.sketch = (*sketch)(workers[r].parameters);
        measured.sync = synchronize_gradients(workers[r].parameters, group, options);
        measured.mean_gradient = flat_gradient(workers[r].parameters);
        return measured;
      },
      workers.front().parameters.front().device());
}

class GradientSyncOnDevice : public lrkit::testing::OnDevice {};

TEST_P(GradientSyncOnDevice, CheapFormsEqualBruteForce) {
  for (int ranks : {2, 3, 4}) {
    auto workers = workers_with_gradients(ranks, false, device());
    GradientSketch sketch(workers[0].parameters, 4096, 99);
    // Small buckets: several all-reduces per step, as with a large model.
    const auto measured = synchronize(workers, {0.01, true, true}, &sketch);

    // Brute force from the gathered full gradients.
    std::vector<torch::Tensor> g;
    for (const auto& w : workers) g.push_back(w.local_gradient);
    const auto mean = torch::stack(g).mean(0);
    diagnostics::RankScalars scalars;
    std::vector<double> sketches;
    for (int k = 0; k < ranks; ++k) {
      const auto& m = measured[static_cast<size_t>(k)];
      EXPECT_TRUE(torch::allclose(m.mean_gradient, mean, 1e-6, 1e-9)) << "rank " << k << " holds the mean gradient";
      EXPECT_NEAR(m.sync.mean_l2.item<double>(), mean.norm().item<double>(), 1e-6 * mean.norm().item<double>());
      EXPECT_NEAR(m.sync.mean_l1.item<double>(), mean.abs().sum().item<double>(), 1e-6 * mean.abs().sum().item<double>());
      EXPECT_NEAR(m.sync.local_sq.item<double>(), g[static_cast<size_t>(k)].pow(2).sum().item<double>(), 1e-6 * m.sync.local_sq.item<double>());
      scalars.loss.push_back(workers[static_cast<size_t>(k)].loss);
      scalars.grad_norm.push_back(std::sqrt(m.sync.local_sq.item<double>()));
      scalars.dot_with_mean.push_back(m.sync.dot_with_mean.item<double>());
      const auto s = m.sketch.to(torch::kCPU).contiguous();
      sketches.insert(sketches.end(), s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
    }
    scalars.mean_grad_norm = mean.norm().item<double>();
    scalars.normalized_sum_sq = measured[0].sync.normalized_sum_sq.item<double>();
    const auto d = diagnostics::step_dispersion(scalars);

    double exact_c = 0, inner = 0;
    for (int i = 0; i < ranks; ++i)
      for (int j = i + 1; j < ranks; ++j) {
        const auto& a = g[static_cast<size_t>(i)];
        const auto& b = g[static_cast<size_t>(j)];
        inner += a.dot(b).item<double>() / (ranks * (ranks - 1) / 2);
        exact_c += (a.dot(b) / (a.norm() * b.norm())).item<double>() / (ranks * (ranks - 1) / 2);
      }
    EXPECT_NEAR(d.cos_pairwise, exact_c, 1e-5) << ranks << " ranks";
    EXPECT_NEAR(d.inner_pairwise, inner, 1e-4 * std::fabs(inner) + 1e-9) << ranks << " ranks";
    for (int k = 0; k < ranks; ++k) {
      const auto& a = g[static_cast<size_t>(k)];
      EXPECT_NEAR(d.cos_to_mean[static_cast<size_t>(k)], (a.dot(mean) / (a.norm() * mean.norm())).item<double>(), 1e-5);
    }
    // The sketch estimate: standard error about 1/sqrt(4096) = 0.016 per pair.
    const auto matrix = diagnostics::sketch_cosine_matrix(sketches, 4096, scalars.grad_norm);
    for (int i = 0; i < ranks; ++i)
      for (int j = 0; j < ranks; ++j) {
        const auto& a = g[static_cast<size_t>(i)];
        const auto& b = g[static_cast<size_t>(j)];
        EXPECT_NEAR(matrix[static_cast<size_t>(i * ranks + j)], (a.dot(b) / (a.norm() * b.norm())).item<double>(), 0.08);
      }
    EXPECT_LT(exact_c, 0.99) << "different data must give different gradients";
  }
}

LRKIT_ON_DEVICES(GradientSyncOnDevice);

TEST(GradientSync, IdenticalDataGivesNoDispersionAndCosineOne) {
  auto workers = workers_with_gradients(3, true);
  const auto measured = synchronize(workers, {25.0, true, true}, nullptr);
  diagnostics::RankScalars scalars;
  for (size_t k = 0; k < 3; ++k) {
    scalars.loss.push_back(workers[k].loss);
    scalars.grad_norm.push_back(std::sqrt(measured[k].sync.local_sq.item<double>()));
    scalars.dot_with_mean.push_back(measured[k].sync.dot_with_mean.item<double>());
  }
  scalars.mean_grad_norm = measured[0].mean_gradient.norm().item<double>();
  scalars.normalized_sum_sq = measured[0].sync.normalized_sum_sq.item<double>();
  const auto d = diagnostics::step_dispersion(scalars);
  EXPECT_EQ(d.loss_std, 0.0);
  EXPECT_NEAR(d.grad_norm_std, 0.0, 1e-12);
  EXPECT_NEAR(d.cos_pairwise, 1.0, 1e-5);
  EXPECT_NEAR(d.inner_pairwise_normalized, 1.0, 1e-5);
  for (double c : d.cos_to_mean) EXPECT_NEAR(c, 1.0, 1e-6);
}

TEST(GradientSync, ClipFollowsPyTorchAndLeavesSmallGradientsBitIdentical) {
  auto workers = workers_with_gradients(1, false);
  auto& w = workers[0];
  const auto before = flat_gradient(w.parameters);
  const double norm = before.norm().item<double>();
  const auto single = make_single_process_collective();
  auto norms = synchronize_gradients(w.parameters, *single, {});
  clip_gradients(w.parameters, norms.mean_l2, norm * 2);
  EXPECT_TRUE(torch::equal(flat_gradient(w.parameters), before));
  EXPECT_NEAR(norms.mean_l2.item<double>(), norm, 1e-6 * norm);
  EXPECT_NEAR(norms.mean_l1.item<double>(), before.abs().sum().item<double>(), 1e-6 * norms.mean_l1.item<double>());
  EXPECT_EQ(norms.dot_with_mean.item<double>(), norms.local_sq.item<double>()) << "one rank: g . g_bar = |g|^2";
  norms = synchronize_gradients(w.parameters, *single, {});
  clip_gradients(w.parameters, norms.mean_l2, norm / 4);
  EXPECT_NEAR(flat_gradient(w.parameters).norm().item<double>(), norm / 4, 1e-5 * norm);
}

TEST(ThreadGroup, RefusesATensorFromAnotherDeviceInOneLine) {
  auto group = make_thread_group(1, torch::Device(torch::kMeta));
  auto host = torch::zeros({2});
  try {
    group[0]->all_reduce_sum(host);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "all-reduce of a tensor on cpu in a group whose tensors live on meta");
  }
  EXPECT_THROW(group[0]->all_gather(host), std::invalid_argument);
  EXPECT_THROW(group[0]->broadcast(host, 0), std::invalid_argument);
  EXPECT_EQ(make_single_process_collective(torch::Device(torch::kMeta))->device(), torch::Device(torch::kMeta));
}

TEST(ThreadGroup, ReducesGathersAndBroadcastsInRankOrder) {
  auto group = make_thread_group(3);
  std::vector<torch::Tensor> sums(3), gathered(3), broadcast(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      for (int round = 0; round < 50; ++round) {  // reuse of the rendezvous across rounds
        sums[static_cast<size_t>(r)] = torch::full({2}, static_cast<double>(r + round), torch::kDouble);
        group[static_cast<size_t>(r)]->all_reduce_sum(sums[static_cast<size_t>(r)]);
        gathered[static_cast<size_t>(r)] = group[static_cast<size_t>(r)]->all_gather(torch::full({1}, static_cast<double>(r), torch::kDouble));
        broadcast[static_cast<size_t>(r)] = torch::full({1}, static_cast<double>(r * 10), torch::kDouble);
        group[static_cast<size_t>(r)]->broadcast(broadcast[static_cast<size_t>(r)], 2);
      }
    });
  for (auto& t : threads) t.join();
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(sums[r][0].item<double>(), 3.0 + 3 * 49);
    EXPECT_TRUE(torch::equal(gathered[r].reshape({-1}), torch::tensor({0.0, 1.0, 2.0}, torch::kDouble)));
    EXPECT_EQ(broadcast[r].item<double>(), 20.0);
  }
  EXPECT_THROW(make_thread_group(0), std::invalid_argument);
}

}  // namespace
}  // namespace lrkit::distributed

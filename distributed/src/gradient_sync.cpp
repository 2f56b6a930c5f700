#include "lrkit/distributed/gradient_sync.hpp"

#include <torch/version.h>

namespace lrkit::distributed {

namespace {

std::vector<torch::Tensor> gradients(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> out;
  for (const auto& p : parameters)
    if (p.grad().defined()) out.push_back(p.grad());
  return out;
}

torch::Tensor sum_of(std::vector<torch::Tensor> parts, const torch::Device& device) {
  if (parts.empty()) return torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  return torch::stack(parts).sum().to(torch::kDouble);
}

// Sum over tensors of ||t||_p^p (p = 2) or ||t||_1, float64, from one multi-tensor norm (a few kernels for
// every gradient instead of two per parameter).
torch::Tensor sum_of_norms(const std::vector<torch::Tensor>& tensors, int p, const torch::Device& device) {
  if (tensors.empty()) return torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  const auto norms = torch::stack(at::_foreach_norm(tensors, p)).to(torch::kDouble);
  return p == 2 ? norms.pow(2).sum() : norms.sum();
}

// Groups gradients into flattened buckets of about `bucket_mb` and calls
// reduce(flat buffer, the bucket's gradients) once per bucket.
template <typename Reduce>
void for_each_bucket(const std::vector<torch::Tensor>& grads, double bucket_mb, Reduce reduce) {
  const auto limit = static_cast<int64_t>(bucket_mb * 1024 * 1024 / sizeof(float));
  std::vector<torch::Tensor> bucket;
  int64_t filled = 0;
  auto flush = [&] {
    if (bucket.empty()) return;
    std::vector<torch::Tensor> flat;
    for (const auto& g : bucket) flat.push_back(g.reshape({-1}));
    reduce(torch::cat(flat), bucket);
    bucket.clear();
    filled = 0;
  };
  for (const auto& g : grads) {
    bucket.push_back(g);
    filled += g.numel();
    if (filled >= limit) flush();
  }
  flush();
}

}  // namespace

GradientSyncResult synchronize_gradients(const std::vector<torch::Tensor>& parameters, Collective& collective,
                                         const GradientSyncOptions& options) {
  torch::NoGradGuard no_grad;
  const auto grads = gradients(parameters);
  const torch::Device device = grads.empty() ? torch::Device(torch::kCPU) : grads.front().device();
  GradientSyncResult result;
  result.local_sq = sum_of_norms(grads, 2, device);
  const int world = collective.world_size();

  if (world == 1) {  // the local gradient is the mean: no buffers, no second pass for its l2 norm
    result.mean_l2 = result.local_sq.sqrt();
    result.mean_l1 = sum_of_norms(grads, 1, device);
    if (options.dot_with_mean) result.dot_with_mean = result.local_sq;
    if (options.exact_pairwise) result.normalized_sum_sq = torch::ones_like(result.local_sq);
    return result;
  }

  // With the exact pairwise cosine, each bucket carries [g_k, g_k / ||g_k||]
  // through one all-reduce: the unit-gradient sum costs bytes, not extra calls.
  const auto inverse_norm = result.local_sq.sqrt().clamp_min(1e-30).reciprocal();
  std::vector<torch::Tensor> dots, unit_sums, mean_squares, mean_abs;
  for_each_bucket(grads, options.bucket_mb, [&](torch::Tensor flat, const std::vector<torch::Tensor>& bucket) {
    const int64_t n = flat.numel();
    if (options.exact_pairwise) flat = torch::cat({flat, flat * inverse_norm.to(flat.dtype())});
    collective.all_reduce_sum(flat);
    if (options.exact_pairwise) unit_sums.push_back(flat.narrow(0, n, n).pow(2).sum());
    const auto mean = flat.narrow(0, 0, n).div_(world);
    mean_squares.push_back(mean.pow(2).sum());
    mean_abs.push_back(mean.abs().sum());
    int64_t offset = 0;
    for (const auto& g : bucket) {
      const auto slice = mean.narrow(0, offset, g.numel());
      if (options.dot_with_mean) dots.push_back(torch::dot(g.reshape({-1}), slice));
      g.copy_(slice.view_as(g));
      offset += g.numel();
    }
  });
  result.mean_l2 = sum_of(mean_squares, device).sqrt();
  result.mean_l1 = sum_of(mean_abs, device);
  if (options.exact_pairwise) result.normalized_sum_sq = sum_of(unit_sums, device);
  if (options.dot_with_mean) result.dot_with_mean = sum_of(dots, device);
  return result;
}

void clip_gradients(const std::vector<torch::Tensor>& parameters, const torch::Tensor& l2, double clip) {
  if (clip <= 0) return;
  torch::NoGradGuard no_grad;
  // No host sync: multiplying by exactly 1 leaves unclipped gradients bit for bit.
  const auto scale = (clip / (l2 + 1e-6)).clamp_max(1.0);
  const auto grads = gradients(parameters);
  if (grads.empty()) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  at::_foreach_mul_(grads, scale.to(grads.front().dtype()));  // one multi-tensor kernel (LibTorch 2.1 on)
#else
  for (const auto& g : grads) g.mul_(scale.to(g.dtype()));
#endif
}

void average_across_ranks(const std::vector<torch::Tensor>& tensors, Collective& collective, double bucket_mb) {
  if (collective.world_size() == 1) return;
  torch::NoGradGuard no_grad;
  for_each_bucket(tensors, bucket_mb, [&](torch::Tensor flat, const std::vector<torch::Tensor>& bucket) {
    collective.all_reduce_sum(flat);
    flat.div_(collective.world_size());
    int64_t offset = 0;
    for (const auto& t : bucket) {
      t.copy_(flat.narrow(0, offset, t.numel()).view_as(t));
      offset += t.numel();
    }
  });
}

void mean_of_replicas(const std::vector<std::vector<torch::Tensor>>& replicas, const std::vector<torch::Tensor>& into,
                      Collective& collective, double bucket_mb) {
  if (replicas.empty()) throw std::invalid_argument("mean_of_replicas: no replicas");
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < into.size(); ++i) {
    if (!into[i].is_same(replicas[0].at(i))) into[i].copy_(replicas[0][i]);
    for (size_t r = 1; r < replicas.size(); ++r) into[i].add_(replicas[r].at(i));
    if (replicas.size() > 1) into[i].div_(static_cast<double>(replicas.size()));
  }
  average_across_ranks(into, collective, bucket_mb);
}

void average_replicas(const std::vector<std::vector<torch::Tensor>>& replicas, Collective& collective, double bucket_mb) {
  mean_of_replicas(replicas, replicas.at(0), collective, bucket_mb);
  torch::NoGradGuard no_grad;
  for (size_t r = 1; r < replicas.size(); ++r)
    for (size_t i = 0; i < replicas[r].size(); ++i) replicas[r][i].copy_(replicas[0][i]);
}

void mean_gradient_into_first(const std::vector<std::vector<torch::Tensor>>& replicas) {
  if (replicas.size() < 2) return;
  torch::NoGradGuard no_grad;
  const auto first = gradients(replicas[0]);
  for (size_t r = 1; r < replicas.size(); ++r) {
    const auto other = gradients(replicas[r]);
    for (size_t i = 0; i < first.size(); ++i) first[i].add_(other.at(i));
  }
  for (const auto& g : first) g.div_(static_cast<double>(replicas.size()));
}

void copy_gradient_from_first(const std::vector<std::vector<torch::Tensor>>& replicas) {
  torch::NoGradGuard no_grad;
  for (size_t r = 1; r < replicas.size(); ++r)
    for (size_t i = 0; i < replicas[r].size(); ++i) {
      const auto& source = replicas[0][i].grad();
      if (!source.defined()) continue;
      auto& target = replicas[r][i].mutable_grad();
      if (target.defined())
        target.copy_(source);
      else
        target = source.clone();
    }
}

GradientSketch::GradientSketch(const std::vector<torch::Tensor>& parameters, int64_t dim, uint64_t seed) : dim_(dim) {
  if (dim < 1) throw std::invalid_argument("sketch dimension must be >= 1 (got " + std::to_string(dim) + ")");
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (const auto& p : parameters) {
    buckets_.push_back(torch::randint(0, dim, {p.numel()}, generator, torch::kLong).to(p.device()));
    signs_.push_back((torch::randint(0, 2, {p.numel()}, generator, torch::kFloat) * 2 - 1).to(p.device()).to(p.dtype()));
  }
}

torch::Tensor GradientSketch::operator()(const std::vector<torch::Tensor>& parameters) const {
  torch::NoGradGuard no_grad;
  if (parameters.size() != buckets_.size())
    throw std::invalid_argument("sketch built for " + std::to_string(buckets_.size()) + " parameters, given " +
                                std::to_string(parameters.size()));
  const auto device = parameters.empty() ? torch::Device(torch::kCPU) : parameters.front().device();
  auto sketch = torch::zeros({dim_}, torch::TensorOptions().dtype(torch::kFloat).device(device));
  for (size_t i = 0; i < parameters.size(); ++i) {
    const auto& g = parameters[i].grad();
    if (!g.defined()) continue;
    sketch.index_add_(0, buckets_[i], (g.reshape({-1}) * signs_[i]).to(torch::kFloat));
  }
  return sketch.to(torch::kDouble);
}

}  // namespace lrkit::distributed

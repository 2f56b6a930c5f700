#include "lrkit/controllers/hdet.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "lrkit/common/check.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"

namespace lrkit::controllers {

void HdetConfig::validate() const {
  // Above every data-parallel job (2^24 replicas: a permutation of 128 MB), where 10^9 took 8 GB and minutes to shuffle.
  constexpr int64_t kMostReplicas = int64_t{1} << 24;
  require(replicas >= 1 && replicas <= kMostReplicas, "hdet.replicas must be in [1, " + std::to_string(kMostReplicas) +
                                                          "] (got " + std::to_string(replicas) + ")");
  require(alpha >= 0 && alpha < 1, "hdet.alpha must be in [0, 1) (got " + format_number(alpha) + ")");
  require(sync_every >= 1, "hdet.sync_every must be >= 1 (got " + std::to_string(sync_every) + ")");
  require(warmup_steps >= 0, "hdet.warmup_steps must be >= 0");
  require(sigma > 0, "hdet.sigma must be > 0 (got " + format_number(sigma) + ")");
  require(beta >= 0 && beta < 1, "hdet.beta must be in [0, 1) (got " + format_number(beta) + ")");
  require(meta_lr > 0, "hdet.meta_lr must be > 0 (got " + format_number(meta_lr) + ")");
  require(min_scale > 0 && min_scale <= 1 && max_scale >= 1, "hdet bounds need 0 < min_scale <= 1 <= max_scale");
  require(lower <= upper, "hdet value bounds need lower <= upper (got " + format_number(lower) + " > " +
                              format_number(upper) + ")");
}

Hdet::Hdet(HdetConfig config) : config_(config) {
  config_.validate();
  const auto n = config_.replicas;
  const double half = std::max(static_cast<double>(n - 1) / 2.0, 0.5);
  for (int64_t i = 0; i < n; ++i)
    spread_.push_back(1.0 + config_.alpha * (static_cast<double>(i) - static_cast<double>(n - 1) / 2.0) / half);
}

std::vector<int64_t> Hdet::permutation(int64_t sync_index) const {
  std::vector<int64_t> p(static_cast<size_t>(config_.replicas));
  std::iota(p.begin(), p.end(), 0);
  uint64_t key = splitmix64(splitmix64(config_.seed) ^ static_cast<uint64_t>(sync_index));
  for (size_t i = p.size(); i > 1; --i) {  // Fisher-Yates
    key = splitmix64(key);
    std::swap(p[i - 1], p[static_cast<size_t>(key % i)]);
  }
  return p;
}

// Runs at every observe and sync: the messages are built only for a state that fails.
void Hdet::check_state(const HdetState& s) const {
  const auto n = config_.replicas;
  const auto replicas = [n] { return std::to_string(n) + " replica" + (n == 1 ? "" : "s"); };
  if (static_cast<int64_t>(s.window_loss.size()) != n)
    throw std::invalid_argument("hdet state: window_loss holds " + std::to_string(s.window_loss.size()) + " values for " +
                                replicas());
  std::vector<bool> seen(static_cast<size_t>(n), false);
  bool ordering = static_cast<int64_t>(s.permutation.size()) == n;
  for (size_t i = 0; ordering && i < s.permutation.size(); ++i) {
    const int64_t p = s.permutation[i];
    ordering = p >= 0 && p < n && !seen[static_cast<size_t>(p)];
    if (ordering) seen[static_cast<size_t>(p)] = true;
  }
  if (!ordering) {
    std::vector<std::string> entries;
    for (const int64_t p : s.permutation) entries.push_back(std::to_string(p));
    throw std::invalid_argument("hdet state: permutation [" + list_for_message(entries) + "] is not an ordering of the " +
                                replicas() + " (each of 0.." + std::to_string(n - 1) + " once)");
  }
  if (s.step < 0 || s.syncs < 0 || s.window_steps < 0 || s.window_steps > s.step)
    throw std::invalid_argument("hdet state: step " + std::to_string(s.step) + ", syncs " + std::to_string(s.syncs) +
                                " and window_steps " + std::to_string(s.window_steps) +
                                " must be counts >= 0, window_steps at most step");
  if (!(std::isfinite(s.scale) && s.scale > 0))
    throw std::invalid_argument("hdet state: scale must be a finite number > 0 (got " + format_number(s.scale) + ")");
  for (const auto& [name, value] : {std::pair<const char*, double>{"offset", s.offset}, {"velocity", s.velocity}, {"delta", s.delta}})
    if (!std::isfinite(value))
      throw std::invalid_argument(std::string("hdet state: ") + name + " must be finite (got " + format_number(value) + ")");
}

HdetState Hdet::init() const {
  HdetState s;
  s.permutation = permutation(0);
  s.window_loss.assign(static_cast<size_t>(config_.replicas), 0.0);
  return s;
}

double Hdet::base_value(const HdetState& s, double scheduled) const {
  return config_.paper_mode ? std::max(scheduled + s.offset, config_.min_scale * scheduled) : scheduled * s.scale;
}

double Hdet::replica_value(const HdetState& s, int64_t replica, double scheduled) const {
  if (replica < 0 || replica >= config_.replicas)
    throw std::out_of_range("replica " + std::to_string(replica) + " of " + std::to_string(config_.replicas));
  // alpha = 0: exactly the base value (plain data parallel for the learning rate).
  if (config_.alpha == 0.0) return std::clamp(base_value(s, scheduled), config_.lower, config_.upper);
  // Runs every step for every replica: the one entry it reads is checked, check_state checks them all.
  const int64_t position =
      static_cast<size_t>(replica) < s.permutation.size() ? s.permutation[static_cast<size_t>(replica)] : -1;
  if (position < 0 || position >= config_.replicas) check_state(s);
  const double rho = spread_[static_cast<size_t>(position)];
  return std::clamp(rho * base_value(s, scheduled), config_.lower, config_.upper);
}

HdetState Hdet::observe(HdetState s, const std::vector<double>& losses) const {
  if (static_cast<int64_t>(losses.size()) != config_.replicas)
    throw std::invalid_argument("hdet: " + std::to_string(losses.size()) + " replica losses for " +
                                std::to_string(config_.replicas) + " replicas");
  check_state(s);
  for (size_t r = 0; r < losses.size(); ++r) s.window_loss[r] += losses[r];
  ++s.window_steps;
  ++s.step;
  return s;
}

bool Hdet::sync_due(const HdetState& s) const { return sync_due_after(s, 0); }

bool Hdet::sync_due_after(const HdetState& s, int64_t more_steps) const {
  const int64_t step = s.step + more_steps;
  return step > 0 && step % config_.sync_every == 0;
}

namespace {

// Auto-LR's softmax weights of (center - L_r) / unit over the replicas' window losses. A replica whose loss is not
// finite (its rate diverged, or overflowed the loss) gets weight 0 and the others are weighed among themselves:
// that its rate failed is the signal, which a NaN center would erase. No finite loss: all weights NaN (no update).
std::vector<double> replica_weights(const std::vector<double>& loss, double sigma, bool standardize) {
  double sum = 0.0;
  size_t finite = 0;
  for (double l : loss) {
    if (!std::isfinite(l)) continue;
    sum += l;
    ++finite;
  }
  const double center = sum / static_cast<double>(finite);
  double spread_of_losses = 0.0;
  for (double l : loss)
    if (std::isfinite(l)) spread_of_losses += (l - center) * (l - center) / static_cast<double>(finite);
  // Standardized: all-equal losses give equal weights (a zero std is no signal).
  const double unit = sigma * (standardize ? std::max(std::sqrt(spread_of_losses), 1e-300) : 1.0);
  std::vector<double> score(loss.size(), -INFINITY);
  double top = -INFINITY;
  for (size_t r = 0; r < loss.size(); ++r)
    if (std::isfinite(loss[r])) top = std::max(top, score[r] = (center - loss[r]) / unit);
  double total = 0.0;
  for (auto& x : score) total += (x = std::isfinite(x) ? std::exp(x - top) : 0.0);
  for (auto& x : score) x /= total;
  return score;
}

}  // namespace

HdetState Hdet::sync(HdetState s, double scheduled) const {
  check_state(s);
  const auto n = static_cast<size_t>(config_.replicas);
  // alpha = 0: every replica has the base rate, Delta is 0 up to rounding; skip it so the base stays exact.
  if (config_.auto_lr && config_.alpha > 0 && s.step >= config_.warmup_steps && s.window_steps > 0 && n > 1) {
    std::vector<double> mean_loss(n);
    for (size_t r = 0; r < n; ++r) mean_loss[r] = s.window_loss[r] / static_cast<double>(s.window_steps);
    const auto weight = replica_weights(mean_loss, config_.sigma, config_.standardize);
    // Delta = sum_r w_r eta_r - mean_r eta_r, relative to the base (multiplicative) or absolute (paper).
    double delta = 0.0;
    for (size_t r = 0; r < n; ++r) delta += weight[r] * spread_[static_cast<size_t>(s.permutation[r])];
    delta -= 1.0;  // mean rho is 1
    if (config_.paper_mode) delta *= base_value(s, scheduled);
    if (std::isfinite(delta)) {
      s.delta = delta;
      s.velocity = config_.beta * s.velocity + (1.0 - config_.beta) * delta;
      if (config_.paper_mode)
        s.offset += config_.meta_lr * s.velocity;
      else
        s.scale = std::clamp(s.scale * (1.0 + config_.meta_lr * s.velocity), config_.min_scale, config_.max_scale);
    }
  }
  ++s.syncs;
  s.permutation = permutation(s.syncs);
  std::fill(s.window_loss.begin(), s.window_loss.end(), 0.0);
  s.window_steps = 0;
  return s;
}

}  // namespace lrkit::controllers

// What one optimizer step measured, across ranks: every rank's gradient norm,
// alignment with the mean and replica losses (one all-gather), the mean
// gradient's norms, read back to the host in one device-to-host copy.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "lrkit/diagnostics/dispersion.hpp"
#include "lrkit/distributed/collective.hpp"
#include "lrkit/distributed/gradient_sync.hpp"
#include "replicas.hpp"

namespace lrkit::train {

struct StepScalars {
  diagnostics::RankScalars ranks;    // a rank's loss is the mean of its replicas' losses
  std::vector<double> replica_loss;  // every replica's local loss, global replica order
  double grad_norm_l1 = 0.0;
  std::vector<double> sketches;      // [world, sketch dim] row-major, when sketched this step
  double loss = 0.0;                 // the step's loss: the mean of the ranks' losses
  int stop_signal = 0;               // the highest stop signal any rank received (0: none): every rank stops alike
};

// `replica_losses`: this rank's replicas' losses ([replicas], float64 on the device);
// `sketch`: this rank's gradient sketch, or undefined; `stop_signal`: the stop signal this rank received (0: none).
StepScalars gather_step_scalars(distributed::Collective& collective, const torch::Tensor& replica_losses,
                                const distributed::GradientSyncResult& sync, const torch::Tensor& sketch, int stop_signal);

// hdet.mode=local: every replica steps on its own gradient, clipped by its own
// norm; no all-reduce. The rank reports the mean squared norm of its replicas
// (so the logged norm is their RMS); no mean gradient exists.
distributed::GradientSyncResult local_gradients(std::vector<Replica>& replicas, distributed::Collective& solo, double clip);

// Local mode has no mean gradient: the logged norm is the ranks' RMS.
void use_rms_gradient_norm(StepScalars& scalars);

}  // namespace lrkit::train

#include "lrkit/train/gpt_config.hpp"

#include <cstdio>
#include <string>

#include "lrkit/common/check.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/train/model_flops.hpp"

namespace lrkit::train {

namespace {
// 16 PB of weights and AdamW's state, far beyond any machine; whole-number counts stay exact below it.
constexpr double kMaxParameters = 1e15;
}  // namespace

void GptConfig::validate() const {
  require(vocab >= 2, "model.vocab must be >= 2 (got " + std::to_string(vocab) + ")");
  require(context >= 1, "model.context must be >= 1 (got " + std::to_string(context) + ")");
  require(layers >= 1, "model.layers must be >= 1 (got " + std::to_string(layers) + ")");
  require(heads >= 1, "model.heads must be >= 1 (got " + std::to_string(heads) + ")");
  require(width >= 1 && width % heads == 0,
          "model.width (" + std::to_string(width) + ") must be a positive multiple of model.heads (" +
              std::to_string(heads) + ")");
  // In whole numbers a shape this large wraps around, and the memory check, which reads the count, passed a model of
  // width 4e9 on to fail in the allocator.
  const double parameters = parameter_count_unbounded(*this);
  char count[32];
  std::snprintf(count, sizeof count, "%.3g", parameters);
  require(parameters <= kMaxParameters,
          "model.width " + std::to_string(width) + ", layers " + std::to_string(layers) + " and context " +
              std::to_string(context) + " give " + count + " parameters (vocabulary " + std::to_string(vocab) +
              "), more than " + format_number(kMaxParameters) + ": no machine holds that");
  require(dropout >= 0.0 && dropout < 1.0, "model.dropout must be in [0, 1) (got " + format_number(dropout) + ")");
  require(attention.valid(), "model.attention must be auto, fused or explicit (got '" + attention.text() + "')");
  require(fused_norm.valid(), "model.fused_norm must be off, on or auto (got '" + fused_norm.text() + "')");
}

}  // namespace lrkit::train

#include "lrkit/train/gpt_config.hpp"

#include <string>

#include "lrkit/common/check.hpp"
#include "lrkit/common/numbers.hpp"

namespace lrkit::train {

void GptConfig::validate() const {
  require(vocab >= 2, "model.vocab must be >= 2 (got " + std::to_string(vocab) + ")");
  require(context >= 1, "model.context must be >= 1 (got " + std::to_string(context) + ")");
  require(layers >= 1, "model.layers must be >= 1 (got " + std::to_string(layers) + ")");
  require(heads >= 1, "model.heads must be >= 1 (got " + std::to_string(heads) + ")");
  require(width >= 1 && width % heads == 0,
          "model.width (" + std::to_string(width) + ") must be a positive multiple of model.heads (" +
              std::to_string(heads) + ")");
  require(dropout >= 0.0 && dropout < 1.0, "model.dropout must be in [0, 1) (got " + format_number(dropout) + ")");
  require(attention.valid(), "model.attention must be auto, fused or explicit (got '" + attention.text() + "')");
  require(fused_norm.valid(), "model.fused_norm must be off, on or auto (got '" + fused_norm.text() + "')");
}

}  // namespace lrkit::train

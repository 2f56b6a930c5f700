// The golden cases of tests/golden (make_golden.py): each case's name, spec and run length, and the rates PyTorch, a
// transcription of Hugging Face's, timm's or Megatron-LM's scheduler gives over it. Read by the tests that check the
// families against them and by those that fit a spec to their rates.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace lrkit::schedules {

// One row of a golden file: the case's name, spec and total steps, the momentum rows' base and max,
// then PyTorch's values for updates 0..T-1.
struct GoldenCase {
  std::string name, spec;
  int64_t total = 0;
  std::vector<double> settings;  // after the spec and the total
  std::vector<double> values;
};

inline std::vector<GoldenCase> load_cases(const std::string& file) {
  std::ifstream in(std::string(LRKIT_GOLDEN_DIR) + "/" + file);
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::istringstream row(line);
    for (std::string field; std::getline(row, field, '\t');) fields.push_back(field);
    GoldenCase c;
    c.name = fields.at(0);
    c.spec = fields.at(1);
    c.total = std::stoll(fields.at(2));
    for (size_t i = 3; i + 1 < fields.size(); ++i) c.settings.push_back(std::stod(fields[i]));
    std::istringstream numbers(fields.back());
    for (double v; numbers >> v;) c.values.push_back(v);
    if (static_cast<int64_t>(c.values.size()) != c.total)
      throw std::runtime_error(file + " case " + c.name + ": " + std::to_string(c.values.size()) + " values for " +
                               std::to_string(c.total) + " steps");
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace lrkit::schedules

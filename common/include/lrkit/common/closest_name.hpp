// The key a typo most likely meant, for "unknown key" messages with dozens of keys to choose from (a list of
// every key would bury the one that was meant).
#pragma once

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace lrkit {

// Edits turning `a` into `b`: insertions, deletions, substitutions and swaps of two neighbours (a swap is the
// commonest typo: "trian").
inline size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The candidate that is `name` in other letter case ("train.STEPS"); else the one within two edits of `name` (one
// where the part after its last dot has at most five characters: "steps" is two edits from "seeds"), the nearest
// first; else the one candidate whose part after its last dot is `name`'s ("steps" -> "train.steps"); else nothing.
inline std::optional<std::string> closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  const auto lower = [](std::string text) {
    for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return text;
  };
  for (const auto& candidate : candidates)
    if (lower(candidate) == lower(name)) return candidate;
  const auto last_part = [](const std::string& key) { return key.substr(key.find_last_of('.') + 1); };
  const size_t allowed = last_part(name).size() <= 5 ? 1 : 2;
  std::optional<std::string> best;
  size_t best_distance = allowed + 1;
  for (const auto& candidate : candidates) {
    const size_t distance = edit_distance(name, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  if (best) return best;
  std::vector<std::string> same_key;
  for (const auto& candidate : candidates)
    if (last_part(candidate) == last_part(name)) same_key.push_back(candidate);
  if (same_key.size() == 1) return same_key.front();
  return std::nullopt;
}

// "; did you mean 'weight_decay' in [optim]?" for an INI file's unknown key "section.name" (as a file writes the
// key the typo most likely meant), or "" where none is close.
inline std::string ini_did_you_mean(const std::string& key, const std::vector<std::string>& candidates) {
  const auto meant = closest_name(key, candidates);
  if (!meant) return "";
  const auto dot = meant->find('.');
  if (dot == std::string::npos) return "; did you mean '" + *meant + "'?";
  return "; did you mean '" + meant->substr(dot + 1) + "' in [" + meant->substr(0, dot) + "]?";
}

}  // namespace lrkit

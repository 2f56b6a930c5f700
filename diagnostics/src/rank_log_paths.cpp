// The per-rank logs a caller names: paths, run directories, and quoted globs (`lrkit diagnose 'logs/rank*.csv'`,
// lrkit.diagnose("logs/rank*.csv")), a glob's files in the order of their ranks.
#include <glob.h>

#include <algorithm>
#include <cctype>

#include "lrkit/common/file_status.hpp"
#include "lrkit/common/run_log_file.hpp"
#include "lrkit/diagnostics/rank_log.hpp"

namespace lrkit::diagnostics {
namespace {

bool has_glob_characters(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// Names compared with their digit runs as numbers: rank10 after rank9, as one file per rank is numbered.
bool natural_less(const std::string& a, const std::string& b) {
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      const auto x = std::stoull(a.substr(i, std::min<size_t>(ie - i, 18)));
      const auto y = std::stoull(b.substr(j, std::min<size_t>(je - j, 18)));
      if (x != y) return x < y;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::vector<std::string> matches(const std::string& pattern) {
  glob_t found{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &found);
  std::vector<std::string> paths(found.gl_pathv, found.gl_pathv + found.gl_pathc);
  ::globfree(&found);
  if (rc != 0 || paths.empty()) throw RankLogError("no file matches '" + pattern + "'");
  std::sort(paths.begin(), paths.end(), natural_less);
  return paths;
}

}  // namespace

std::vector<std::string> rank_log_paths(const std::vector<std::string>& inputs) {
  std::vector<std::string> paths;
  for (const auto& input : inputs) {
    // A path that exists is itself, whatever characters it holds ("runs/a[1]" was read as a pattern).
    const bool pattern = has_glob_characters(input) && !path_exists(input);
    const auto named = pattern ? matches(input) : std::vector<std::string>{run_log_argument(input)};
    paths.insert(paths.end(), named.begin(), named.end());
  }
  return paths;
}

}  // namespace lrkit::diagnostics

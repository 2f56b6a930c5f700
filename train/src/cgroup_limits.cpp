#include "lrkit/train/cgroup_limits.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "lrkit/common/numbers.hpp"
#include "lrkit/common/text_file.hpp"

namespace lrkit::train {

namespace {

namespace fs = std::filesystem;

bool has_token(const std::string& list, const std::string& token) {
  const auto tokens = split_list(list);
  return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
}

// mountinfo writes a space, tab, newline or backslash in a path as a three-digit octal escape ("\040").
std::string unescape(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    const bool octal = field[i] == '\\' && i + 3 < field.size() &&
                       std::all_of(field.begin() + static_cast<long>(i) + 1, field.begin() + static_cast<long>(i) + 4,
                                   [](char c) { return c >= '0' && c <= '7'; });
    if (octal) {
      out += static_cast<char>(std::stoi(field.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

struct CgroupMount {
  std::string root;         // the hierarchy's directory this mount shows
  fs::path point;           // where it is mounted
  bool version2 = false;
  std::string options;      // v1: the controllers the hierarchy carries, among its super options ("rw,cpu,cpuacct")
};

std::vector<CgroupMount> cgroup_mounts(const std::string& mountinfo_text) {
  std::vector<CgroupMount> mounts;
  std::istringstream in(mountinfo_text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields_in(line);
    std::vector<std::string> fields;
    for (std::string field; fields_in >> field;) fields.push_back(field);
    const auto dash = std::find(fields.begin(), fields.end(), "-");  // optional fields end at " - "
    if (fields.size() < 5 || fields.end() - dash < 4) continue;
    const std::string& type = dash[1];
    if (type != "cgroup2" && type != "cgroup") continue;
    mounts.push_back({unescape(fields[3]), unescape(fields[4]), type == "cgroup2", dash[3]});
  }
  return mounts;
}

// The process's path in the v2 hierarchy ("0::/path") or in the v1 hierarchy that carries `controller`.
std::optional<std::string> cgroup_path(const std::string& cgroup_text, bool version2, const std::string& controller) {
  std::istringstream in(cgroup_text);
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string id = line.substr(0, first), controllers = line.substr(first + 1, second - first - 1);
    const bool matches = version2 ? id == "0" && controllers.empty() : has_token(controllers, controller);
    if (matches) return line.substr(second + 1);
  }
  return std::nullopt;
}

std::optional<std::string> first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// "max" (no limit) and -1 (v1's no limit) are not positive numbers.
std::optional<double> quota_over_period(const std::string& quota, const std::string& period) {
  const auto q = parse_number(quota), p = parse_number(period);
  if (q && p && *q > 0 && *p > 0) return *q / *p;
  return std::nullopt;
}

// cpu.max: "max 100000" or "QUOTA PERIOD"; v1: cpu.cfs_quota_us (-1: no limit) and cpu.cfs_period_us.
std::optional<double> cpu_limit_in(const fs::path& directory, bool version2) {
  if (version2) {
    std::istringstream line(first_line(directory / "cpu.max").value_or(""));
    std::string quota, period, more;
    return line >> quota >> period && !(line >> more) ? quota_over_period(quota, period) : std::nullopt;
  }
  const auto quota = first_line(directory / "cpu.cfs_quota_us"), period = first_line(directory / "cpu.cfs_period_us");
  return quota && period ? quota_over_period(*quota, *period) : std::nullopt;
}

// memory.max: bytes or "max"; v1: memory.limit_in_bytes, where no limit reads as the largest page-aligned count
// (9223372036854771712 with 4 KiB pages).
std::optional<double> memory_limit_in(const fs::path& directory, bool version2) {
  const auto text = first_line(directory / (version2 ? "memory.max" : "memory.limit_in_bytes"));
  const auto bytes = text ? parse_number(*text) : std::nullopt;
  if (!bytes || !(*bytes > 0) || *bytes >= 0x1p62) return std::nullopt;
  return *bytes;
}

using LimitIn = std::optional<double> (*)(const fs::path& directory, bool version2);

// The smallest limit from the process's directory up to the mount point: a parent's limit binds its children.
std::optional<double> smallest_limit(const CgroupMount& mount, const std::string& path, LimitIn limit_in) {
  const bool under_root = mount.root == "/" || path == mount.root || path.rfind(mount.root + "/", 0) == 0;
  // Outside the mounted part of the hierarchy (another cgroup namespace): the mount point is all there is to read.
  const std::string relative = under_root ? path.substr(mount.root == "/" ? 0 : mount.root.size()) : "";
  const fs::path top = mount.point.lexically_normal();
  const fs::path below = fs::path(relative).relative_path();
  fs::path directory = below.empty() ? top : (top / below).lexically_normal();
  std::optional<double> smallest;
  for (;;) {
    if (const auto limit = limit_in(directory, mount.version2)) smallest = std::min(smallest.value_or(*limit), *limit);
    if (directory == top || directory.native().size() <= top.native().size()) break;
    directory = directory.parent_path();
  }
  return smallest;
}

// The smallest limit of `controller` over every hierarchy that carries it.
std::optional<double> cgroup_limit(const std::string& cgroup_text, const std::string& mountinfo_text,
                                   const std::string& controller, LimitIn limit_in) {
  std::optional<double> smallest;
  for (const auto& mount : cgroup_mounts(mountinfo_text)) {
    if (!mount.version2 && !has_token(mount.options, controller)) continue;
    const auto path = cgroup_path(cgroup_text, mount.version2, controller);
    if (!path) continue;
    if (const auto limit = smallest_limit(mount, *path, limit_in)) smallest = std::min(smallest.value_or(*limit), *limit);
  }
  return smallest;
}

std::optional<double> this_process_limit(const std::string& controller, LimitIn limit_in) {
  try {
    return cgroup_limit(read_text("/proc/self/cgroup"), read_text("/proc/self/mountinfo"), controller, limit_in);
  } catch (const std::runtime_error&) {  // no /proc: no limit to read
    return std::nullopt;
  }
}

}  // namespace

std::optional<double> cgroup_cpu_limit(const std::string& cgroup_text, const std::string& mountinfo_text) {
  return cgroup_limit(cgroup_text, mountinfo_text, "cpu", cpu_limit_in);
}

std::optional<double> cgroup_cpu_limit() { return this_process_limit("cpu", cpu_limit_in); }

std::optional<double> cgroup_memory_limit(const std::string& cgroup_text, const std::string& mountinfo_text) {
  return cgroup_limit(cgroup_text, mountinfo_text, "memory", memory_limit_in);
}

std::optional<double> cgroup_memory_limit() { return this_process_limit("memory", memory_limit_in); }

}  // namespace lrkit::train

#include "lrkit/schedules/tfevents_file.hpp"

#include <filesystem>
#include <set>

#include "lrkit/common/message_text.hpp"
#include "lrkit/common/tfevents.hpp"

namespace lrkit::schedules {

namespace {

// Calls on_value(file, step, value) for each Summary value of each event and on_start(step) for each SessionLog
// START, in the files' order.
template <class OnValue, class OnStart>
void for_each_event(const std::vector<std::string>& files, OnValue on_value, OnStart on_start) {
  TfEvent event;
  for (const std::string& file : files) {
    TfEventReader events(file);
    while (events.next(event)) {
      if (event.session_start) on_start(event.step);
      for (const SummaryValue& value : event.values) on_value(file, event.step, value);
    }
  }
}

// How a message names the files: the one file, or their directory.
std::string files_name(const std::vector<std::string>& files) {
  if (files.size() == 1) return "'" + files.front() + "'";
  return "'" + std::filesystem::path(files.front()).parent_path().string() + "' (" + std::to_string(files.size()) +
         " event files)";
}

Series read_series(const std::vector<std::string>& files, const std::string& tag) {
  Series series;
  for_each_event(
      files,
      [&](const std::string& file, int64_t step, const SummaryValue& v) {
        if (v.tag() != tag) return;
        double value = 0.0;
        if (const std::string why = v.scalar(value); !why.empty())
          throw SeriesFileError("'" + file + "': tag '" + text_for_message(tag) + "' at step " + std::to_string(step) +
                                " is not a scalar: " + why);
        append_logged_row(series, static_cast<double>(step), value);
      },
      [&](int64_t step) { drop_rows_from(series, static_cast<double>(step)); });
  if (!series.values.empty()) return series;
  std::set<std::string> scalar_tags;  // sorted, each once
  for_each_event(
      files,
      [&](const std::string&, int64_t, const SummaryValue& v) {
        double value = 0.0;
        if (v.scalar(value).empty()) scalar_tags.emplace(v.tag());
      },
      [](int64_t) {});
  std::vector<std::string> shown;
  for (const std::string& name : scalar_tags) shown.push_back(text_for_message(name));
  throw SeriesFileError(files_name(files) + ": no scalar tag '" + text_for_message(tag) + "'" +
                        (shown.empty() ? std::string(" (it holds no scalars)")
                                       : "; its scalar tags: " + list_for_message(shown, 40)));
}

}  // namespace

Series read_tfevents_series(const std::vector<std::string>& files, const std::string& tag) {
  if (files.empty()) throw SeriesFileError("no event files to read");
  try {
    return read_series(files, tag);
  } catch (const EventFileError& e) {
    throw SeriesFileError(e.what());
  }
}

}  // namespace lrkit::schedules

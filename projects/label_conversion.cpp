// Label conversion between CSV and HDF5.
#include "projects/label_conversion.hpp"

#include <fmt/core.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"

namespace labpose::projects {
namespace fs = std::filesystem;

std::vector<ConversionResult> convert_labels(const ProjectConfig& config, LabelFormat to) {
  std::vector<ConversionResult> results;
  const ProjectLayout layout(config.project_dir());
  for (const auto& folder : layout.labeled_folders()) {
    for (const auto& scorer : label_scorers(folder)) {
      const LabelFiles files = label_files(folder, scorer);
      ConversionResult result;
      result.source = to == LabelFormat::h5 ? files.csv : files.h5;
      result.target = to == LabelFormat::h5 ? files.h5 : files.csv;
      std::error_code error;
      if (!fs::exists(result.source, error)) continue;  // nothing to convert from in this folder
      try {
        const Table table =
            to == LabelFormat::h5 ? read_table_csv(result.source) : read_table_hdf5(result.source);
        keypoint_columns(table,
                         result.source);  // refuse to spread a malformed table to the other file
        if (fs::exists(result.target, error)) {
          bool same = false;
          try {
            const Table existing = to == LabelFormat::h5 ? read_table_hdf5(result.target)
                                                         : read_table_csv(result.target);
            same = same_table(existing, table);
          } catch (const Error&) {
            same = false;  // unreadable or old format: replace it, keeping a backup
          }
          if (same) {
            result.outcome = ConversionResult::Outcome::unchanged;
            results.push_back(std::move(result));
            continue;
          }
          result.backup = keep_backup(result.target);
        }
        if (to == LabelFormat::h5) {
          write_table_hdf5(table, result.target);
        } else {
          write_table_csv(table, result.target);
        }
      } catch (const Error& failure) {
        result.outcome = ConversionResult::Outcome::failed;
        result.message = failure.what();
        result.hint = failure.hint();
      }
      results.push_back(std::move(result));
    }
  }
  return results;
}

}  // namespace labpose::projects

#pragma once
// The flags `calibrate import`, `fit` and `report` share to read logs that do not say everything:
//   --op OP         the collective of tables that do not name it (a bare pasted table)
//   --ranks N       the rank count of tables that do not state it
//   --placement P   out | in | both (default): which block of each row to use
// and how the warnings the import raised (an inferred rank count, a header that busbw/algbw
// contradicts) are printed.
#include <string>
#include <vector>

#include "calibration/measurement_io.hpp"
#include "cli/command_line.hpp"

namespace syncsim::app {

void add_import_options(po::options_description& options);
// ImportOptions from those flags; a bad value throws CalibrateUsageError naming the flag.
calibration::ImportOptions import_options(const CommandLine& cl);

// "# warning: file:line: message" per warning, for the text outputs.
std::string import_warnings_text(const std::vector<calibration::LogWarning>& warnings);
// The warnings' texts ("file:line: message") about one op and rank count, or all when op is empty.
std::vector<std::string> import_warning_texts(const std::vector<calibration::LogWarning>& warnings,
                                              const std::string& op = "", int ranks = 0);

}  // namespace syncsim::app

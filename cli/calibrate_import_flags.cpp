#include "cli/calibrate_import_flags.hpp"

#include <stdexcept>

#include "cli/calibrate_cmd.hpp"

namespace syncsim::app {

void add_import_options(po::options_description& options) {
  options.add_options()("op", po::value<std::string>(),
                        "collective of logs that do not name it (e.g. a bare pasted table): "
                        "all_reduce, all_gather, reduce_scatter, alltoall, sendrecv, broadcast, "
                        "reduce")("ranks", po::value<int>(),
                                  "rank count of logs that do not state it (default: inferred "
                                  "from busbw/algbw where the op allows)")(
      "placement", po::value<std::string>(),
      "out | in | both: which block of each row to use (default both: a fit takes both as "
      "points, a report their mean)");
}

calibration::ImportOptions import_options(const CommandLine& cl) {
  calibration::ImportOptions o;
  if (cl.has("op")) {
    const std::string given = cl.get<std::string>("op");
    o.parse.op = calibration::canonical_op(given);
    if (o.parse.op.empty()) {
      throw CalibrateUsageError(
          "--op: expected all_reduce, all_gather, reduce_scatter, alltoall, sendrecv, broadcast "
          "or reduce, found \"" +
          given + "\"");
    }
  }
  if (cl.has("ranks")) {
    o.parse.ranks = cl.get<int>("ranks");
    if (o.parse.ranks <= 0) {
      throw CalibrateUsageError("--ranks: expected a positive rank count, found " +
                                std::to_string(o.parse.ranks));
    }
  }
  if (cl.has("placement")) {
    try {
      o.placement = calibration::parse_placement_choice(cl.get<std::string>("placement"));
    } catch (const std::invalid_argument& e) {
      throw CalibrateUsageError(std::string("--placement: ") + e.what());
    }
  }
  return o;
}

std::string import_warnings_text(const std::vector<calibration::LogWarning>& warnings) {
  std::string s;
  for (const auto& w : warnings) s += "# warning: " + w.text() + "\n";
  return s;
}

std::vector<std::string> import_warning_texts(const std::vector<calibration::LogWarning>& warnings,
                                              const std::string& op, int ranks) {
  std::vector<std::string> out;
  for (const auto& w : warnings) {
    if (op.empty() || (w.op == op && w.ranks == ranks)) out.push_back(w.text());
  }
  return out;
}

}  // namespace syncsim::app

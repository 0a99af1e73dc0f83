#pragma once
// RFC 4180 CSV records: fields split on commas; a "quoted" field may hold commas, newlines and
// doubled quotes. The one reader behind `syncsim plot`, `syncsim report SWEEP.csv` and the
// validation baseline.
#include <stdexcept>
#include <string>
#include <vector>

namespace syncsim::app {

struct CsvRecord {
  int line = 1;  // the 1-based line the record starts on
  std::vector<std::string> fields;
};

// A quoted field that never closes; `line` is where its record starts.
class CsvQuoteError : public std::runtime_error {
 public:
  explicit CsvQuoteError(int at_line)
      : std::runtime_error("unterminated quoted field"), line(at_line) {}
  int line;
};

// The non-empty records of `text` (blank lines skipped), in order; \n, \r\n and \r end a record.
// Throws CsvQuoteError.
std::vector<CsvRecord> read_csv_records(const std::string& text);

}  // namespace syncsim::app

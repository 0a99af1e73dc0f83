// The one CSV reader (run/csv_records.hpp) against RFC 4180's cases, with record line numbers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "run/csv_records.hpp"

using syncsim::app::CsvQuoteError;
using syncsim::app::CsvRecord;
using syncsim::app::read_csv_records;

TEST_CASE("csv records: quoted commas, newlines and doubled quotes; CRLF; blank lines") {
  const std::vector<CsvRecord> r =
      read_csv_records("a,b,c\r\n\"x, y\",\"two\nlines\",\"say \"\"hi\"\"\"\n\n1,,3\n,\n");
  REQUIRE(r.size() == 4);
  CHECK(r[0].fields == std::vector<std::string>{"a", "b", "c"});
  CHECK(r[0].line == 1);
  CHECK(r[1].fields == std::vector<std::string>{"x, y", "two\nlines", "say \"hi\""});
  CHECK(r[1].line == 2);
  CHECK(r[2].fields == std::vector<std::string>{"1", "", "3"});
  CHECK(r[2].line == 5);  // the quoted newline took line 3, line 4 is blank
  CHECK(r[3].fields == std::vector<std::string>{"", ""});
  // No final newline: the last record still counts; "" alone is one empty field.
  CHECK(read_csv_records("a,b\n1,2").back().fields == std::vector<std::string>{"1", "2"});
  CHECK(read_csv_records("\"\"\n").front().fields == std::vector<std::string>{""});
  CHECK(read_csv_records("").empty());
}

TEST_CASE("csv records: an unterminated quote names its record's line") {
  try {
    read_csv_records("a\nb\n\"open,\nstill\n");
    FAIL("no error");
  } catch (const CsvQuoteError& e) {
    CHECK(e.line == 3);
  }
}

// CSV files (RFC 4180 records on one line each): reading the openb traces and
// a run's own outputs (gpuslice report reads them back), and the one quoting
// rule every CSV the project writes uses.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuslice::sim {

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> lines;  // the file's line number of each row
  // The index of column `name`; a missing required column is an InputError
  // at line 1 of `source`, an optional one reads -1.
  int column(const std::string& name, const std::string& source, bool required = true) const;
};

// Calls `header` once with the first record, then `row` for each further
// record with its line number. Empty lines are skipped, a UTF-8 byte order
// mark and CR line ends accepted; a record whose cell count differs from the
// header's, an unclosed quote or an empty file is an InputError at `source`.
// `optional_tail`: a record may lack that many of the header's last cells
// (columns appended in a later version, absent from rows written before or
// by hand); they read as empty.
void for_each_csv_record(std::string_view csv, const std::string& source,
                         const std::function<void(const std::vector<std::string>&)>& header,
                         const std::function<void(const std::vector<std::string>&, int line)>& row,
                         size_t optional_tail = 0);

// The whole file as a table (for small files; large ones stream).
CsvTable read_csv_table(std::string_view csv, const std::string& source);

// A cell as written: quoted (quotes doubled) when it holds a comma, a quote
// or a line end (allocation annotations hold commas), else as it is.
std::string csv_cell(std::string_view text);

}  // namespace gpuslice::sim

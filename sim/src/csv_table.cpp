#include "gpuslice/sim/csv_table.hpp"

#include <fmt/format.h>

#include "gpuslice/core/errors.hpp"

namespace gpuslice::sim {

using core::InputError;

namespace {
// One CSV record (RFC 4180): a field may be quoted, with "" for a quote
// inside; quoted fields do not span lines in the files read here.
void split_csv_line(std::string_view line, const std::string& source, int line_no,
                    std::vector<std::string>& out) {
  out.clear();
  std::string cell;
  size_t i = 0;
  while (true) {
    cell.clear();
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (true) {
        if (i >= line.size()) throw InputError(source, line_no, "", "a quoted field is not closed");
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        cell += line[i++];
      }
      if (i < line.size() && line[i] != ',')
        throw InputError(source, line_no, "", "text after a closing quote (write \"\" for a quote)");
    } else {
      const size_t c = line.find(',', i);
      cell = line.substr(i, c == std::string_view::npos ? std::string_view::npos : c - i);
      i = c == std::string_view::npos ? line.size() : c;
    }
    out.push_back(cell);
    if (i >= line.size()) break;
    ++i;  // the comma
  }
}
}  // namespace

int CsvTable::column(const std::string& name, const std::string& source, bool required) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  if (required) throw InputError(source, 1, name, "missing column");
  return -1;
}

void for_each_csv_record(std::string_view csv, const std::string& source,
                         const std::function<void(const std::vector<std::string>&)>& header,
                         const std::function<void(const std::vector<std::string>&, int line)>& row,
                         size_t optional_tail) {
  int line_no = 0;
  size_t header_cells = 0;
  bool seen_header = false;
  std::vector<std::string> cells;
  size_t pos = csv.starts_with("\xEF\xBB\xBF") ? 3 : 0;  // a UTF-8 byte order mark (spreadsheet exports)
  while (pos < csv.size()) {
    size_t end = csv.find('\n', pos);
    std::string_view line =
        csv.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? csv.size() : end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    split_csv_line(line, source, line_no, cells);
    if (!seen_header) {
      seen_header = true;
      header_cells = cells.size();
      header(cells);
      continue;
    }
    if (cells.size() > header_cells || cells.size() + optional_tail < header_cells)
      throw InputError(source, line_no, "",
                       fmt::format("{} cells, the header has {}", cells.size(), header_cells));
    cells.resize(header_cells);
    row(cells, line_no);
  }
  if (!seen_header) throw InputError(source, 0, "", "empty file");
}

CsvTable read_csv_table(std::string_view csv, const std::string& source) {
  CsvTable t;
  for_each_csv_record(
      csv, source, [&](const std::vector<std::string>& h) { t.header = h; },
      [&](const std::vector<std::string>& cells, int line) {
        t.rows.push_back(cells);
        t.lines.push_back(line);
      });
  return t;
}

std::string csv_cell(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string q = "\"";
  for (char c : text) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace gpuslice::sim

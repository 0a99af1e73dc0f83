#include "calibration/nccl_tests_log.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "calibration/bus_bandwidth_ranks.hpp"

namespace syncsim::calibration {

namespace {

std::string format_error(const std::string& file, int line, const std::string& message) {
  if (line <= 0) return file + ": " + message;
  return file + ":" + std::to_string(line) + ": " + message;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0) ++i;
    const std::size_t start = i;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) == 0) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// Strips the "0: ", "[0] ", "[1,0]<stdout>:" or "[host:123] " prefixes that launchers (srun -l,
// mpirun --tag-output, nccl-tests' own multi-process output) put in front of each line.
std::string_view strip_prefix(std::string_view s) {
  // srun --label: "0: " (a row never starts with a number followed by ':').
  {
    const std::string_view t = trim(s);
    std::size_t i = 0;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) != 0) ++i;
    if (i > 0 && i < t.size() && t[i] == ':') s = t.substr(i + 1);
  }
  for (int guard = 0; guard < 2; ++guard) {
    const std::string_view t = trim(s);
    if (t.empty() || t.front() != '[') return s;
    const std::size_t close = t.find(']');
    if (close == std::string_view::npos) return s;
    std::string_view rest = t.substr(close + 1);
    for (std::string_view tag : {"<stdout>", "<stderr>"}) {
      if (rest.substr(0, tag.size()) == tag) rest.remove_prefix(tag.size());
    }
    if (!rest.empty() && rest.front() == ':') rest.remove_prefix(1);
    s = rest;
  }
  return s;
}

template <class T>
std::optional<T> to_int(std::string_view s) {
  T v{};
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> to_double(std::string_view s) {
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The part of a "# ..." line after the '#'.
std::optional<std::string_view> comment_body(std::string_view line) {
  const std::string_view t = trim(line);
  if (t.empty() || t.front() != '#') return std::nullopt;
  return t.substr(1);
}

// Reads "key value" pairs from the "# nThread 1 nGpus 8 minBytes ..." line.
std::optional<int> header_int(const std::vector<std::string_view>& tokens, std::string_view key) {
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (tokens[i] == key) return to_int<int>(tokens[i + 1]);
  }
  return std::nullopt;
}

// Column layout announced by the "#  size  count  type  redop  root  time ..." header line.
struct Layout {
  bool has_root = true;
  bool wrong_is_error = false;  // old layout: `error` (a float) instead of `#wrong`
  std::size_t prefix = 5;       // size count type redop [root]
  std::size_t block = 4;        // time algbw busbw #wrong [i_min i_max ...]
  std::size_t blocks = 2;       // out-of-place, in-place
  std::size_t columns() const { return prefix + block * blocks; }
  std::string describe() const {
    std::string s = has_root ? "size count type redop root" : "size count type redop";
    s += " + " + std::to_string(blocks) + " x (time algbw busbw ";
    s += wrong_is_error ? "error" : "#wrong";
    if (block > 4) s += " +" + std::to_string(block - 4);
    return s + ")";
  }
};

std::optional<Layout> layout_from_header(const std::vector<std::string_view>& tokens) {
  if (tokens.size() < 8 || tokens[0] != "size" || tokens[1] != "count") return std::nullopt;
  Layout l;
  std::vector<std::size_t> time_at;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == "time") time_at.push_back(i);
    if (tokens[i] == "error") l.wrong_is_error = true;
  }
  if (time_at.empty()) return std::nullopt;
  l.prefix = time_at[0];
  l.has_root = std::find(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(l.prefix),
                         "root") != tokens.begin() + static_cast<std::ptrdiff_t>(l.prefix);
  l.blocks = time_at.size();
  l.block = (tokens.size() - l.prefix) / l.blocks;
  if (l.block < 4 || l.prefix + l.block * l.blocks != tokens.size()) return std::nullopt;
  return l;
}

// Layout of a row when no column header was seen: 13 fields = current, 12 = old.
std::optional<Layout> layout_from_row(std::size_t fields) {
  Layout l;
  if (fields == 13) return l;
  if (fields == 12) {
    l.has_root = false;
    l.wrong_is_error = true;
    l.prefix = 4;
    return l;
  }
  return std::nullopt;
}

std::string quoted(std::string_view s) {
  std::string q(1, '"');  // built by appending: GCC 12 warns (-Wrestrict) on "\"" + std::string
  q.append(s);
  q.push_back('"');
  return q;
}

// The op a row's columns fit when they fit one only; else empty, with `candidates` naming them.
std::string op_from_columns(const Measurement& m, std::string& candidates) {
  const bool no_redop = m.redop == "none";
  if (m.root && *m.root >= 0) return no_redop ? "broadcast" : "reduce";
  if (m.root) {
    candidates =
        no_redop ? "all_gather, all_to_all and send_recv" : "all_reduce and reduce_scatter";
  } else {
    candidates = no_redop ? "all_gather, all_to_all, send_recv and broadcast"
                          : "all_reduce, reduce_scatter and reduce";
  }
  return "";
}

std::string columns_of(const Measurement& m) {
  return "redop " + m.redop + ", " +
         (m.root ? "root " + std::to_string(*m.root) : "no root column");
}

}  // namespace

std::string LogWarning::text() const { return format_error(file, line, message); }

ParseError::ParseError(std::string file, int line, std::string message)
    : std::runtime_error(format_error(file, line, message)),
      file_(std::move(file)),
      line_(line),
      message_(std::move(message)) {}

const char* to_string(Placement p) { return p == Placement::InPlace ? "in" : "out"; }

std::string canonical_op(std::string_view name) {
  std::string s;
  for (char c : name) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  const std::size_t slash = s.find_last_of('/');
  if (slash != std::string::npos) s = s.substr(slash + 1);
  if (s.size() > 5 && s.ends_with("_perf")) s.resize(s.size() - 5);
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  static const std::map<std::string, std::string, std::less<>> kOps = {
      {"allreduce", "all_reduce"}, {"allgather", "all_gather"}, {"reducescatter", "reduce_scatter"},
      {"alltoall", "all_to_all"},  {"sendrecv", "send_recv"},   {"broadcast", "broadcast"},
      {"reduce", "reduce"},        {"gather", "gather"},        {"scatter", "scatter"},
      {"hypercube", "hypercube"}};
  const auto it = kOps.find(s);
  return it == kOps.end() ? std::string() : it->second;
}

NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& file,
                                  const ParseOptions& options) {
  NcclTestsLog log;
  log.file = file;
  std::optional<Layout> layout;
  std::map<int, DeviceInfo> devices;
  int line_no = 0;
  std::size_t pos = 0;
  auto fail = [&](const std::string& msg) { throw ParseError(file, line_no, msg); };
  // The rows of the current test, log.measurements[test_first..], get their op and rank count when
  // the test ends (the next test's header or the end of the file): the ratio needs them all.
  std::size_t test_first = 0;
  int test_line = 0;
  auto finish_test = [&]() {
    if (log.measurements.size() == test_first) return;
    const std::vector<Measurement> rows(
        log.measurements.begin() + static_cast<std::ptrdiff_t>(test_first), log.measurements.end());
    std::vector<LogWarning> notes;
    auto note = [&](const std::string& message) {
      notes.push_back({file, test_line, "", 0, message});
    };
    std::string op = log.op;
    if (op.empty()) op = options.op;
    if (op.empty()) {
      std::string candidates;
      op = op_from_columns(rows.front(), candidates);
      if (op.empty()) {
        throw ParseError(
            file, test_line,
            "expected the collective before the first row (\"# Collective test starting: X\", a "
            "command line naming X_perf, or --op), found none; the columns (" +
                columns_of(rows.front()) + ") fit " + candidates);
      }
      note("op " + op + " taken from the columns (" + columns_of(rows.front()) + ")");
    } else if (!options.op.empty() && options.op != op) {
      note("--op " + options.op + " not applied: the log names " + op);
    }
    const RanksFromBusBandwidth implied = ranks_from_bus_bandwidth(op, rows);
    const std::string ratio_says =
        implied.ranks ? "busbw/algbw gives " + std::to_string(*implied.ranks) : std::string();
    int ranks = 0;
    std::string stated;  // where the header's count comes from
    if (!devices.empty()) {
      ranks = static_cast<int>(devices.size());
      stated = std::to_string(ranks) + " \"#  Rank\" lines";
    } else if (log.nthreads * log.ngpus > 1) {
      ranks = log.nthreads * log.ngpus;
      stated = "nThread " + std::to_string(log.nthreads) + " x nGpus " + std::to_string(log.ngpus);
    }
    if (ranks > 0) {
      if (options.ranks > 0 && options.ranks != ranks)
        note("--ranks " + std::to_string(options.ranks) + " not applied: the log has " + stated);
      if (implied.ranks && *implied.ranks != ranks)
        note("the log has " + stated + " but " + ratio_says + "; using " + std::to_string(ranks));
    } else if (options.ranks > 0) {
      ranks = options.ranks;
      if (implied.ranks && *implied.ranks != ranks)
        note("--ranks " + std::to_string(ranks) + " but " + ratio_says + "; using " +
             std::to_string(ranks));
    } else if (implied.ranks) {
      ranks = *implied.ranks;
      note("rank count " + std::to_string(ranks) + " inferred from busbw/algbw of " + op +
           (log.nthreads * log.ngpus == 1 ? " (the header's nThread 1 nGpus 1 is per process)"
                                          : ""));
    } else if (log.nthreads * log.ngpus == 1) {
      ranks = 1;
      note("nThread 1 nGpus 1 and no \"#  Rank\" lines: taken as 1 rank (" + implied.why_not +
           "); pass --ranks if several processes ran it");
    } else {
      throw ParseError(file, test_line,
                       "expected the rank count before the first row (\"# nThread N nGpus N\", "
                       "\"#  Rank\" lines, or --ranks), found none; " +
                           implied.why_not);
    }
    for (auto it = log.measurements.begin() + static_cast<std::ptrdiff_t>(test_first);
         it != log.measurements.end(); ++it) {
      it->op = op;
      it->ranks = ranks;
    }
    for (auto& n : notes) {
      n.op = op;
      n.ranks = ranks;
      log.warnings.push_back(std::move(n));
    }
    log.op = op;
    log.ranks = ranks;
    test_first = log.measurements.size();
  };

  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const std::string_view line = strip_prefix(raw);

    if (const auto body = comment_body(line)) {
      const std::string_view b = trim(*body);
      const auto tokens = split_ws(b);
      if (tokens.empty()) continue;
      const bool starts_test = b.starts_with("Collective test starting:") ||
                               tokens[0] == "nThread" || b.starts_with("Using devices");
      if (starts_test) finish_test();
      if (b.starts_with("Collective test starting:")) {
        const std::string op = canonical_op(trim(b.substr(25)));
        if (op.empty())
          fail("expected a collective name after \"Collective test starting:\", found " +
               quoted(trim(b.substr(25))));
        log.op = op;
        devices.clear();
        layout.reset();
      } else if (b.starts_with("nccl-tests version")) {
        log.version = std::string(trim(b.substr(18)));
      } else if (tokens[0] == "nThread") {
        const auto nthreads = header_int(tokens, "nThread");
        const auto ngpus = header_int(tokens, "nGpus");
        if (!nthreads || !ngpus)
          fail("expected \"nThread N nGpus N\" with integers, found " + quoted(b));
        log.nthreads = *nthreads;
        log.ngpus = *ngpus;
        devices.clear();
      } else if (b.starts_with("Using devices")) {
        devices.clear();
      } else if (tokens[0] == "Rank" && tokens.size() >= 2) {
        const auto rank = to_int<int>(tokens[1]);
        if (!rank) fail("expected a rank number after \"Rank\", found " + quoted(tokens[1]));
        DeviceInfo d;
        d.rank = *rank;
        for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
          if (tokens[i] == "on") d.host = std::string(tokens[i + 1]);
          if (tokens[i] == "device") {
            d.device = to_int<int>(tokens[i + 1]).value_or(0);
            // The name follows the "[busid]" token; it may contain spaces.
            const std::size_t close =
                b.find(']', static_cast<std::size_t>(tokens[i + 1].data() - b.data()));
            if (close != std::string_view::npos) d.name = std::string(trim(b.substr(close + 1)));
            break;
          }
        }
        devices[d.rank] = d;
      } else if (tokens[0] == "size") {
        layout = layout_from_header(tokens);
        if (!layout)
          fail(
              "expected a column header \"size count type redop [root] time algbw busbw "
              "#wrong|error ...\", found " +
              quoted(b));
      }
      continue;
    }

    const auto fields = split_ws(line);
    if (fields.empty()) continue;
    // A row starts with two integers (size, count); launcher chatter such as "[host:123] 15 more
    // processes have sent help message ..." starts with one.
    if (!all_digits(fields[0]) || (fields.size() > 1 && !all_digits(fields[1]))) {
      // A command line naming the binary ("./build/all_reduce_perf -b 8 ...") gives the op when the
      // log lacks the "Collective test starting" line; anything else (NCCL INFO chatter) is
      // skipped.
      if (log.op.empty() || log.measurements.size() > test_first) {
        for (const auto f : fields) {
          if (f.ends_with("_perf")) {
            const std::string op = canonical_op(f);
            if (!op.empty()) {
              finish_test();
              log.op = op;
            }
            break;
          }
        }
      }
      continue;
    }

    // A data row.
    const Layout l = layout ? *layout : layout_from_row(fields.size()).value_or(Layout{});
    if (fields.size() != l.columns()) {
      fail("expected " + std::to_string(l.columns()) + " columns (" + l.describe() + "), found " +
           std::to_string(fields.size()));
    }
    auto int_field = [&](std::size_t i, const char* name) {
      const auto v = to_int<int64_t>(fields[i]);
      if (!v)
        fail(std::string("column ") + name + ": expected an integer, found " + quoted(fields[i]));
      return *v;
    };
    auto num_field = [&](std::size_t i, const std::string& name) {
      const auto v = to_double(fields[i]);
      if (!v || *v < 0)
        fail("column " + name + ": expected a non-negative number, found " + quoted(fields[i]));
      return *v;
    };
    if (log.measurements.size() == test_first) test_line = line_no;
    Measurement m;
    m.line = line_no;
    m.bytes = int_field(0, "size");
    m.count = int_field(1, "count");
    m.type = std::string(fields[2]);
    m.redop = std::string(fields[3]);
    if (l.has_root) {
      const auto root = to_int<int>(fields[4]);
      if (!root) fail("column root: expected an integer, found " + quoted(fields[4]));
      m.root = *root;
    }
    for (std::size_t blk = 0; blk < l.blocks; ++blk) {
      const std::size_t at = l.prefix + blk * l.block;
      Measurement b = m;
      b.placement = blk == 0 ? Placement::OutOfPlace : Placement::InPlace;
      const std::string where = blk == 0 ? " (out-of-place)" : " (in-place)";
      b.time_us = num_field(at, "time" + where);
      b.algbw_GBps = num_field(at + 1, "algbw" + where);
      b.busbw_GBps = num_field(at + 2, "busbw" + where);
      const std::string_view w = fields[at + 3];
      if (w != "N/A") {
        std::optional<double> v;
        if (l.wrong_is_error) {
          v = to_double(w);
        } else if (const auto n = to_int<int64_t>(w)) {
          v = static_cast<double>(*n);
        }
        if (!v) {
          fail(std::string("column ") + (l.wrong_is_error ? "error" : "#wrong") + where +
               ": expected " + (l.wrong_is_error ? "a number" : "an integer") + " or N/A, found " +
               quoted(w));
        }
        b.wrong = *v;
      }
      log.measurements.push_back(std::move(b));
    }
  }
  finish_test();
  log.devices.reserve(devices.size());
  for (const auto& [rank, d] : devices) log.devices.push_back(d);
  return log;
}

NcclTestsLog read_nccl_tests_log(const std::string& path, const ParseOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, "expected a readable nccl-tests log, found none");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_nccl_tests_log(ss.str(), path, options);
}

}  // namespace syncsim::calibration

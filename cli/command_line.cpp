#include "cli/command_line.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <ostream>

namespace syncsim::app {

namespace {
OptionTableCapture* active_capture = nullptr;  // one capture at a time (command_line.hpp)

void record(const po::options_description& options,
            const po::positional_options_description& positional) {
  // An unlimited positional list (LOG...) repeats its name at every later position: 16 are plenty.
  std::vector<std::string> positional_names;
  for (unsigned i = 0; i < positional.max_total_count() && i < 16; ++i) {
    positional_names.push_back(positional.name_for_position(i));
  }
  for (const auto& o : options.options()) {
    OptionInfo info;
    info.long_name = o->long_name();
    const std::string format = o->format_name();  // "-q [ --quiet ]" or "--json"
    if (format.size() > 2 && format[0] == '-' && format[1] != '-')
      info.short_name = format.substr(1, 1);
    info.takes_value = o->semantic()->max_tokens() > 0;
    info.positional = std::find(positional_names.begin(), positional_names.end(), info.long_name) !=
                      positional_names.end();
    info.description = o->description();
    active_capture->options.push_back(std::move(info));
  }
}
}  // namespace

OptionTableCapture::OptionTableCapture() { active_capture = this; }
OptionTableCapture::~OptionTableCapture() { active_capture = nullptr; }

CommandLine parse_command_line_or_throw(const std::vector<std::string>& args,
                                        const po::options_description& options,
                                        const po::positional_options_description& positional) {
  namespace style = po::command_line_style;
  if (active_capture != nullptr) record(options, positional);
  CommandLine cl;
  const po::parsed_options parsed = po::command_line_parser(args)
                                        .options(options)
                                        .positional(positional)
                                        .style(style::unix_style ^ style::allow_guessing)
                                        .run();
  for (const po::option& o : parsed.options) {
    for (const std::string& v : o.value) cl.in_order.emplace_back(o.string_key, v);
    if (o.value.empty()) cl.in_order.emplace_back(o.string_key, "");
  }
  po::store(parsed, cl.values);
  po::notify(cl.values);
  return cl;
}

unsigned parse_positive_count(const std::string& flag, const std::string& value) {
  unsigned n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n == 0 || n > 1024) {
    throw UsageError("--" + flag + ": expected a positive integer (at most 1024), found \"" +
                     value + "\"");
  }
  return n;
}

uint64_t parse_count(const std::string& flag, const std::string& value) {
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
    throw UsageError("--" + flag + ": expected a non-negative integer, found \"" + value + "\"");
  }
  return n;
}

void print_help(std::ostream& out, const std::string& usage,
                const po::options_description& options) {
  out << usage << "\n" << options << "\n";
}

void add_override_options(po::options_description& options, bool with_seed) {
  options.add_options()(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario value: --set dotted.path=value (repeatable; =null removes the key)")(
      "unset", po::value<std::vector<std::string>>()->composing(),
      "remove a scenario key, e.g. --unset workload.fsdp (repeatable; applied before --set)");
  if (with_seed)
    options.add_options()("seed", po::value<uint64_t>(), "override the scenario's seed");
}

LoadOptions load_options(const CommandLine& cl) {
  LoadOptions load;
  if (cl.has("seed")) load.seed = cl.get<uint64_t>("seed");
  for (const auto& s : cl.all("unset")) load.overrides.push_back(unset_override(s));
  for (const auto& s : cl.all("set")) load.overrides.push_back(parse_override(s));
  return load;
}

}  // namespace syncsim::app

#pragma once
// Walks a subcommand's arguments, where a flag takes its value as `--flag VALUE` or `--flag=VALUE`.
// Shared by the hand-parsed subcommands (plot, calibrate flow, calibrate report), whose flags repeat
// and mix with positional arguments in ways Boost.Program_options' positional handling does not fit.
#include <cstddef>
#include <string>
#include <vector>

namespace syncsim::app {

template <class UsageError>
class ArgCursor {
 public:
  explicit ArgCursor(const std::vector<std::string>& args) : args_(args) {}

  // Moves to the next argument; false past the last.
  bool next() {
    if (started_) ++index_;
    started_ = true;
    return index_ < args_.size();
  }
  const std::string& arg() const { return args_[index_]; }

  // The current argument is `flag` itself or `flag=...`.
  bool is(const std::string& flag) const {
    const std::string& a = arg();
    return a == flag || (a.size() > flag.size() && a.starts_with(flag) && a[flag.size()] == '=');
  }

  // The current flag's value: after its '=', else the next argument (consumed).
  std::string value(const std::string& flag) {
    const std::string& a = arg();
    if (a.size() > flag.size() && a.starts_with(flag) && a[flag.size()] == '=') return a.substr(flag.size() + 1);
    if (index_ + 1 >= args_.size()) throw UsageError(flag + ": expected a value, found none");
    return args_[++index_];
  }

 private:
  const std::vector<std::string>& args_;
  std::size_t index_ = 0;
  bool started_ = false;
};

}  // namespace syncsim::app

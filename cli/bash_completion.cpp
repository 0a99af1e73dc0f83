// `syncsim completion bash`: the completion script, written from the command table and each
// command's option table (cli/command_table.hpp), so it offers exactly the flags the parsers take.
#include <sstream>

#include "cli/command_table.hpp"

namespace syncsim::app {

std::string bash_completion() {
  std::string commands;
  std::string calibrate_subcommands;
  for (const CommandInfo& c : command_table()) {
    if (c.name.find(' ') == std::string::npos) {
      commands += c.name + " ";
    } else if (c.name.starts_with("calibrate ")) {
      calibrate_subcommands += c.name.substr(10) + " ";
    }
  }
  std::ostringstream o;
  o << "# bash completion for syncsim, written by `syncsim completion bash`; load it with\n"
       "#   source <(syncsim completion bash)\n"
       "# Commands and their flags; any other word completes as a file name.\n"
       "_syncsim() {\n"
       "  local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
       "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
       "    COMPREPLY=($(compgen -W \""
    << commands
    << "--help --version\" -- \"$cur\"))\n"
       "    return\n"
       "  fi\n"
       "  local key=\"${COMP_WORDS[1]}\"\n"
       "  if [ \"$key\" = calibrate ]; then\n"
       "    if [ \"$COMP_CWORD\" -eq 2 ]; then\n"
       "      COMPREPLY=($(compgen -W \""
    << calibrate_subcommands
    << "--help\" -- \"$cur\"))\n"
       "      return\n"
       "    fi\n"
       "    key=\"calibrate ${COMP_WORDS[2]}\"\n"
       "  fi\n"
       "  if [ \"$key\" = completion ] && [ \"$COMP_CWORD\" -eq 2 ]; then\n"
       "    COMPREPLY=($(compgen -W \"bash\" -- \"$cur\"))\n"
       "    return\n"
       "  fi\n"
       "  [[ \"$cur\" == -* ]] || return 0\n"
       "  local flags=\"\"\n"
       "  case \"$key\" in\n";
  for (const CommandInfo& c : command_table()) {
    if (c.name == "calibrate") continue;  // its subcommands carry the flags
    std::string flags;
    for (const OptionInfo& opt : command_options(c.name)) {
      if (opt.positional) continue;
      flags += "--" + opt.long_name + " ";
      if (!opt.short_name.empty()) flags += "-" + opt.short_name + " ";
    }
    if (!flags.empty()) flags.pop_back();
    o << "    \"" << c.name << "\") flags=\"" << flags << "\" ;;\n";
  }
  o << "  esac\n"
       "  COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n"
       "}\n"
       "complete -o default -F _syncsim syncsim\n";
  return o.str();
}

}  // namespace syncsim::app

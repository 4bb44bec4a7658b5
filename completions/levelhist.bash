# bash completion for levelhist: commands, each command's options (those its
# --help lists: tests/test_cli_completion.cpp keeps them in step), the values
# of the options that take names (--type, --format, --backend, --strategy,
# ...), image files for the image commands and files elsewhere.
# Installed as share/bash-completion/completions/levelhist; to try it from a
# build tree: source completions/levelhist.bash
# Self-contained: it needs nothing from the bash-completion package.

_levelhist_options() {
  case "$1" in
    count) echo "--type --bins --range --edges --numpy --channels --active --weights --weight-type --sparse --columns
                 --backend --strategy --threads --devices --format --per-file --plot --log --no-progress --help" ;;
    text) echo "--fold-case --format --per-file --no-progress --backend --strategy --threads --help" ;;
    sort) echo "--type -o --output --backend --threads --no-progress --help" ;;
    list) echo "--format --why --type --bins --range --edges --numpy --channels --active --weight-type --backend --help" ;;
    image) echo "--format --plot --log --backend --strategy --threads --max-pixels --help" ;;
    threshold) echo "-o --output --value --otsu --invert --backend --strategy --threads --max-pixels --help" ;;
    equalize) echo "-o --output --clahe --clip-limit --tiles --backend --strategy --threads --max-pixels --help" ;;
    joint) echo "--bins --format --backend --strategy --threads --max-pixels --help" ;;
    bench) echo "--cpu --general --sort --shapes --help" ;;
  esac
}

# Files (and directories to descend into); with a pattern, only names that
# match it (case-insensitive), e.g. 'pgm|png'. One name per COMPREPLY entry,
# spaces and all.
_levelhist_files() {
  local cur=$1 pattern=$2 name
  COMPREPLY=()
  while IFS= read -r name; do
    if [[ -z $pattern || -d $name ]]; then
      COMPREPLY+=("$name")
    else
      local lower=${name,,}
      [[ $lower =~ \.($pattern)$ ]] && COMPREPLY+=("$name")
    fi
  done < <(compgen -f -- "$cur")
}

_levelhist() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd=
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  ((COMP_CWORD > 1)) && cmd=${COMP_WORDS[1]}
  local commands="count text sort list image threshold equalize joint bench help"
  COMPREPLY=()
  if ((COMP_CWORD == 1)); then
    mapfile -t COMPREPLY < <(compgen -W "$commands -h --help -V --version" -- "$cur")
    return
  fi
  if [[ $cmd == help ]]; then
    ((COMP_CWORD == 2)) && mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
    return
  fi
  local words=
  case $prev in
    --type)
      if [[ $cmd == sort ]]; then words="u8 i8 u16 i16"; else words="u8 i8 u16 i16 i32 u32 f32 f64 u64 i64"; fi ;;
    --weight-type) words="f32 f64" ;;
    --format) words="table csv json" ;;
    --backend) words="auto cpu cuda" ;;
    --devices) words="all" ;;  # or a list of device indices
    --strategy)
      # The strategies of this build, from the levelhist being completed.
      words="auto $("${COMP_WORDS[0]}" list --format csv 2>/dev/null | tail -n +2 | cut -d, -f1 | tr '\n' ' ')" ;;
    --range) words="auto" ;;
    --bins | --edges | --channels | --active | --threads | --value | --max-pixels | --columns | --clip-limit | --tiles) return ;;  # a number
    --weights) _levelhist_files "$cur" "npy|f32|f64|raw|bin"; [[ ${#COMPREPLY[@]} -gt 0 ]] || _levelhist_files "$cur"; return ;;
    --plot) _levelhist_files "$cur" "svg|png"; return ;;
    -o | --output)
      case $cmd in
        threshold | equalize) _levelhist_files "$cur" "pgm|ppm|pnm|png|jpe?g|tiff?" ;;
        *) _levelhist_files "$cur" ;;
      esac
      return ;;
  esac
  if [[ -n $words ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
    return
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_levelhist_options "$cmd")" -- "$cur")
    return
  fi
  case $cmd in
    image | threshold | equalize | joint) _levelhist_files "$cur" "pgm|ppm|pnm|png|jpe?g|tiff?" ;;
    list) ;;
    *) _levelhist_files "$cur" ;;
  esac
}

complete -o filenames -o bashdefault -F _levelhist levelhist

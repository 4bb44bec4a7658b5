#!/usr/bin/env bash
# Fails when a relative link of the documentation points at a file that is not
# there (a raw output moved to the repository history, a renamed document): the
# markdown links [text](target) and ![alt](target) of README.md, docs/*.md and
# bench/README.md, outside fenced code blocks. Web links (scheme:...) and
# links within the same page (#anchor) are not checked; a target's own
# #anchor is dropped before the file is looked up.
#
#   scripts/check_links.sh [ROOT]     ROOT: the source tree (default: this checkout)
#
# Prints every broken link as path:line: target and exits 1; exits 0 when
# every link resolves, 2 when it cannot check (ROOT is not a directory or
# holds none of the documents).
set -euo pipefail

root=${1:-"$(dirname "$0")/.."}
if [[ ! -d $root ]]; then
  echo "check_links.sh: '$root' is not a directory; give the source tree's root" >&2
  exit 2
fi
cd "$root"

docs=()
for f in README.md docs/*.md bench/README.md; do
  [[ -f $f ]] && docs+=("$f")
done
if ((${#docs[@]} == 0)); then
  echo "check_links.sh: no README.md or docs/*.md under $(pwd); give the source tree's root" >&2
  exit 2
fi

checked=0
broken=0
for doc in "${docs[@]}"; do
  dir=$(dirname "$doc")
  # One "line<TAB>target" per link; a fence (``` or ~~~) toggles code.
  while IFS=$'\t' read -r line target; do
    case $target in
      '' | '#'* | *:*) continue ;;  # empty, same page, or a scheme (https:, mailto:)
    esac
    file=${target%%#*}
    file=${file%% *}  # [text](target "title")
    checked=$((checked + 1))
    if [[ ! -e $dir/$file ]]; then
      echo "$doc:$line: $target"
      broken=$((broken + 1))
    fi
  done < <(awk '
    /^[ \t]*(```|~~~)/ { code = !code; next }
    code { next }
    {
      rest = $0
      while (match(rest, /\]\([^)]*\)/)) {
        printf "%d\t%s\n", FNR, substr(rest, RSTART + 2, RLENGTH - 3)
        rest = substr(rest, RSTART + RLENGTH)
      }
    }' "$doc")
done

if ((broken > 0)); then
  echo "check_links.sh: $broken of $checked relative link(s) above point at no file; fix the link," \
    "or cite a file that moved to the repository history as text (commit and path)" >&2
  exit 1
fi
echo "check_links.sh: ${#docs[@]} documents, $checked relative links, all resolve"

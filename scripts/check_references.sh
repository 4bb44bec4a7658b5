#!/usr/bin/env bash
# Fails when a text file of the source tree names something a reader cannot
# follow: a team-internal source document (three digits, an underscore and
# sixteen hex digits) or an issue of a tracker users do not have (the word
# issue followed by a number). Cite the literature as docs/REFERENCES.md does,
# and say what an issue meant instead of its number. An upstream issue written
# as owner/repo#number (a public tracker) is fine.
#
#   scripts/check_references.sh [ROOT]     ROOT: the source tree (default: this checkout)
#
# Prints every offending line as path:line:text and exits 1; exits 0 when the
# tree is clean, 2 when it cannot check (ROOT is not a directory or holds no
# files, or grep fails). Binary files are skipped, and so are the raw
# measurement logs under docs/results/; in a git checkout only the files git
# tracks or does not ignore are read, elsewhere every file but .git and CMake
# build trees (a directory holding CMakeCache.txt).
set -euo pipefail

root=${1:-"$(dirname "$0")/.."}
if [[ ! -d $root ]]; then
  echo "check_references.sh: '$root' is not a directory; give the source tree's root" >&2
  exit 2
fi
cd "$root"

internal_document='[0-9]{3}_[0-9a-f]{16}'
issue_number='[Ii]ssues? #?[0-9]'

files=()
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # A checkout: the files git tracks or would (ignored build outputs and carried trees are not the source).
  while IFS= read -r -d '' f; do
    [[ -f $f && $f != docs/results/* ]] && files+=("$f")
  done < <(git ls-files -z --cached --others --exclude-standard)
else
  while IFS= read -r -d '' f; do
    files+=("${f#./}")
  done < <(find . \( -type d \( -name .git -o -path ./docs/results -o -exec test -e '{}/CMakeCache.txt' \; \) \) \
    -prune -o -type f -print0)
fi

if ((${#files[@]} == 0)); then
  echo "check_references.sh: no files under $(pwd); give the source tree's root" >&2
  exit 2
fi

status=0
hits=$(grep -I -n -H -E -e "$internal_document" -e "$issue_number" -- "${files[@]}") || status=$?
if ((status == 0)); then
  printf '%s\n' "$hits"
  echo "check_references.sh: $(printf '%s\n' "$hits" | wc -l) line(s) above name an internal document or an" \
    "issue number; cite the work as docs/REFERENCES.md does, or say what the issue meant" >&2
  exit 1
elif ((status != 1)); then
  echo "check_references.sh: grep failed on the tree under $(pwd); see its message above" >&2
  exit 2
fi
echo "check_references.sh: ${#files[@]} files, no internal document names or issue numbers"

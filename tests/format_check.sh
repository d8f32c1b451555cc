#!/bin/sh
# Whether the tracked C++ files follow .clang-format: runs clang-format
# --dry-run --Werror over them and lists the files it would change.
#   tests/format_check.sh [SOURCE_DIR]   (default: this script's repository)
#   tests/format_check.sh --self-test    (a made-up checkout: one file follows
#                                         the style, then one does not)
# Exit 0 all formatted, 1 some would change (clang-format's warnings say
# where), 2 no clang-format or no git checkout. CLANG_FORMAT names the binary.
# To reformat: git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' | xargs clang-format -i
cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null 2>&1 || { echo "format_check: no $cf (Debian: apt-get install clang-format)" >&2; exit 2; }
if [ "$1" = "--self-test" ]; then
  self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
  tmp=$(mktemp -d) || exit 2
  trap 'rm -rf "$tmp"' EXIT
  cp "$(dirname "$0")/../.clang-format" "$tmp/" || exit 2
  printf 'int f(int x) { return x + 1; }\n' > "$tmp/good.cpp"
  git -C "$tmp" init -q && git -C "$tmp" add .clang-format good.cpp || exit 2
  sh "$self" "$tmp" >/dev/null 2>&1 || { echo "self-test: a formatted file was refused" >&2; exit 1; }
  printf 'int g( int x ){return x+1 ;}\n' > "$tmp/bad.cpp"
  git -C "$tmp" add bad.cpp || exit 2
  out=$(sh "$self" "$tmp" 2>/dev/null); rc=$?
  [ "$rc" -eq 1 ] && [ "$out" = "bad.cpp" ] || { echo "self-test: bad.cpp not caught (exit $rc, listed: $out)" >&2; exit 1; }
  echo "format_check self-test: passed"
  exit 0
fi
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
files=$(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' 2>/dev/null) || { echo "format_check: $root is not a git checkout" >&2; exit 2; }
[ -n "$files" ] || { echo "format_check: no C++ files tracked under $root" >&2; exit 2; }
bad=0
for f in $files; do
  "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || { echo "$f"; bad=1; }
done
if [ "$bad" -ne 0 ]; then
  echo "format_check: the files above differ from .clang-format ($($cf --version));" \
       "run: $cf -i <file>" >&2
  exit 1
fi
echo "format_check: $(echo "$files" | wc -l) files follow .clang-format"

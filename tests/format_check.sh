#!/bin/sh
# Whether the tracked C++ files follow .clang-format: runs clang-format
# --dry-run --Werror over them and lists the files it would change.
#   tests/format_check.sh [SOURCE_DIR]   (default: this script's repository)
# Exit 0 all formatted, 1 some would change (clang-format's warnings say
# where), 2 no clang-format or no git checkout. CLANG_FORMAT names the binary.
# To reformat: git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' | xargs clang-format -i
root=${1:-$(dirname "$0")/..}
cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null 2>&1 || { echo "format_check: no $cf (Debian: apt-get install clang-format)" >&2; exit 2; }
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

# The benches' summary arithmetic, sourced by them (from the repository root).
# median NUMBERS...: the middle value (the upper middle of an even count); callers pass their word lists unquoted.
# ratio A B [DECIMALS]: A / B, printed with DECIMALS (default 2) decimals.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
ratio() { awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN {printf "%." d "f", a / b}'; }

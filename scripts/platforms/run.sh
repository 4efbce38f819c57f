#!/usr/bin/env bash
# Every platform script in this folder, one after the other, each timed; the summary
# says which passed. Exits non-zero when any failed. `npm run test:platforms` runs this.
set -uo pipefail
dir="$(cd "$(dirname "$0")" && pwd)"
summary=()
failed=0
for script in "$dir"/*.sh; do
  name="$(basename "$script" .sh)"
  [ "$name" = run ] && continue
  start=$SECONDS
  if bash "$script"; then result=passed; else result=FAILED; failed=1; fi
  summary+=("$(printf '%-10s %-7s %4d s' "$name" "$result" $((SECONDS - start)))")
done
printf '\n== platforms\n'
printf '%s\n' "${summary[@]}"
exit $failed

# Sourced by the GPU-machine scripts (tools/gpu_check.sh,
# tools/gpu_isolation_check.sh): their steps, logged and summed up, and the
# Chart.js file that reports/ embeds (chart_js_flag). Sets `summary` (one line a step) and
# `status` (1 once a step failed); STEP_TAIL lines of each step's output
# (default 0) are echoed after it.
declare -a summary
status=0
step() {  # step NAME LOG COMMAND...: run, log, remember the outcome
  local name=$1 log=$2
  shift 2
  local start=$SECONDS first
  echo "== $name" >>"$log"
  first=$(wc -l <"$log")
  echo "== $name"
  "$@" >>"$log" 2>&1
  local rc=$?
  summary+=("$(printf '%-34s %s (%ds)' "$name" "$([ $rc -eq 0 ] && echo ok || echo "FAILED rc=$rc")" $((SECONDS - start)))")
  [ $rc -eq 0 ] || status=1
  if [ "${STEP_TAIL:-0}" -gt 0 ]; then tail -n +"$((first + 1))" "$log" | tail -n "$STEP_TAIL"; fi
  return $rc
}
# chart_js_flag: the -DULPSCOPE_CHART_JS=... flag for the first Chart.js found
# (Debian's, or the one .devdeps/ unpacks into /tmp/devroot), or nothing.
chart_js_flag() {
  local f
  for f in /usr/share/javascript/chart.js/chart.min.js /tmp/devroot/usr/share/javascript/chart.js/chart.min.js; do
    if [ -f "$f" ]; then echo "-DULPSCOPE_CHART_JS=$f"; return; fi
  done
}

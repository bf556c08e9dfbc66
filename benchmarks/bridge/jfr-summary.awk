# Summarises `jfr print --events jdk.ExecutionSample`: samples per thread, and per thread the
# methods that are on the stack (inclusive) of the flinkgo shim and of Flink's (de)serialisers,
# plus the hottest leaf frames. Usage: jfr print ... | awk -f jfr-summary.awk
function norm(t) { sub(/ \([0-9]+\/[0-9]+\).*/, "", t); sub(/#[0-9]+.*/, "", t); return t }
/^jdk.ExecutionSample/ { n++; th = ""; depth = 0; delete seen; next }
/sampledThread = / { t = $0; sub(/.*sampledThread = "/, "", t); sub(/".*/, "", t); th = norm(t); threads[th]++; next }
/stackTrace = \[/ { instack = 1; next }
instack && /^[ \t]*\]$/ { instack = 0; next }
instack {
  f = $0; sub(/^[ \t]+/, "", f); sub(/[ \t]+line:.*/, "", f); sub(/\(.*/, "", f)
  if (f == "...") next
  if (depth == 0) leaf[th SUBSEP f]++
  depth++
  if (!(f in seen)) { seen[f] = 1; if (f ~ /^io\.flinkgo\.shim\.(GoAgentOperator|arrow|runtime|wire)/ || f ~ /RowSerializer\.(serialize|deserialize|copy)$/ || f ~ /CopyingChainingOutput\.collect$/ || f ~ /KeyGroupRangeAssignment\.assignToKeyGroup$/) incl[th SUBSEP f]++ }
}
END {
  printf "%d samples\n\nsamples by thread:\n", n
  for (t in threads) if (threads[t] >= n / 100) printf "%7d %5.1f%%  %s\n", threads[t], 100 * threads[t] / n, t | "sort -rn"
  close("sort -rn")
  for (t in threads) {
    if (threads[t] < n / 10) continue
    printf "\nthread \"%s\" (%d samples), inclusive:\n", t, threads[t]
    for (k in incl) { split(k, p, SUBSEP); if (p[1] == t && incl[k] >= threads[t] / 50) printf "%7d %5.1f%%  %s\n", incl[k], 100 * incl[k] / threads[t], p[2] | "sort -rn" }
    close("sort -rn")
    printf "thread \"%s\", hottest leaf frames:\n", t
    for (k in leaf) { split(k, p, SUBSEP); if (p[1] == t && leaf[k] >= threads[t] / 50) printf "%7d %5.1f%%  %s\n", leaf[k], 100 * leaf[k] / threads[t], p[2] | "sort -rn | head -12" }
    close("sort -rn | head -12")
  }
}

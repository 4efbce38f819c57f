// Small statistics and formatting helpers.

export function sorted(values) {
  return Float64Array.from(values).sort()
}

/** The q-quantile (0..1) of `values`, nearest-rank on the sorted samples. */
export function quantile(values, q) {
  const s = values instanceof Float64Array ? values : sorted(values)
  if (s.length === 0) return NaN
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))
  return s[rank]
}

export const median = (values) => {
  const s = sorted(values)
  const n = s.length
  if (n === 0) return NaN
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2
}

/** Half the range of the rounds, as a fraction of their median. */
export function spread(values) {
  const m = median(values)
  if (!Number.isFinite(m) || m === 0 || values.length < 2) return 0
  return (Math.max(...values) - Math.min(...values)) / 2 / Math.abs(m)
}

export function formatNumber(x) {
  if (x === undefined || x === null || Number.isNaN(x)) return "—"
  const a = Math.abs(x)
  if (a >= 1e5) return Math.round(x).toLocaleString("en-US")
  if (a >= 100) return x.toFixed(0)
  if (a >= 10) return x.toFixed(1)
  if (a >= 1) return x.toFixed(2)
  return x.toFixed(3)
}

/** "median ±spread%" of a list of round results. */
export function summary(values) {
  if (!values || values.length === 0) return "—"
  const pct = spread(values) * 100
  return `${formatNumber(median(values))} ±${pct < 10 ? pct.toFixed(1) : pct.toFixed(0)}%`
}

export function table(rows, header) {
  const all = [header, ...rows]
  const widths = header.map((_, i) => Math.max(...all.map((r) => String(r[i] ?? "").length)))
  const line = (r) => "| " + r.map((cell, i) => String(cell ?? "").padEnd(widths[i])).join(" | ") + " |"
  return [line(header), "| " + widths.map((w) => "-".repeat(w)).join(" | ") + " |", ...rows.map(line)].join("\n")
}

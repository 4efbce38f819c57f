// The table: one row per scenario figure and era, a column per client, the ratios of
// toolnexus to each official client and to the floor, and the target with its verdict.

import { ERAS } from "./clients.mjs"
import { formatNumber, median, summary, table } from "./stats.mjs"

const OFFICIAL = ["v1", "v2"]
const COLUMNS = ["toolnexus", "v1", "v2", "floor"]

/** Notes for unavailable clients: the same client and reason share one number. */
export class Notes {
  constructor() {
    this.list = []
  }
  mark(label, scenarioId, reason) {
    const text = `${label}: unavailable: ${reason}`
    let index = this.list.findIndex((note) => note.text === text)
    if (index === -1) index = this.list.push({ text, scenarios: new Set() }) - 1
    this.list[index].scenarios.add(scenarioId)
    return `unavailable [${index + 1}]`
  }
  lines() {
    return this.list.map((note, i) => `[${i + 1}] ${note.text} (${[...note.scenarios].join(", ")})`)
  }
}

const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN)
const times = (x) => (Number.isNaN(x) ? "—" : `${formatNumber(x)}×`)

function verdict(row, era, medians) {
  const { target } = row
  if (!target) return ["", ""]
  const tn = medians.toolnexus
  const parts = []
  const checks = []
  const lower = row.better === "lower"
  const r = era === "2026" ? (target.modern ?? target.ratio) : target.ratio
  if (r !== undefined) {
    const against = OFFICIAL.filter((k) => (!target.only || target.only === k) && k in medians)
    if (against.length > 0) {
      parts.push(`${lower ? "≤" : "≥"} ${r}× ${against.join(", ")}`)
      for (const k of against) {
        const x = ratio(tn, medians[k])
        checks.push(lower ? x <= r : x >= r)
      }
    }
  }
  if (target.floor !== undefined && "floor" in medians) {
    parts.push(`≤ ${target.floor}× floor`)
    checks.push(ratio(tn, medians.floor) <= target.floor)
  }
  if (target.atMost !== undefined) {
    parts.push(`≤ ${target.atMost} ${row.unit}`)
    checks.push(tn <= target.atMost)
  }
  if (parts.length === 0) return ["", ""]
  // A ratio to a missing figure is NaN and fails its comparison: say so rather than "NO".
  const known = Number.isFinite(tn) && checks.length > 0
  return [parts.join(", "), !known ? "—" : checks.every(Boolean) ? "yes" : "NO"]
}

/**
 * The rows of one pass: `results` is [{ scenario, clients: [{ client, rounds, unavailable }] }].
 */
export function passTable(results, notes) {
  const rows = []
  for (const { scenario, clients } of results) {
    for (const era of Object.keys(ERAS)) {
      const inEra = clients.filter((c) => c.client.era === era)
      if (inEra.length === 0) continue
      for (const row of scenario.rows) {
        const medians = {}
        const cells = {}
        for (const { client, rounds, unavailable } of inEra) {
          if (unavailable) {
            cells[client.kind] = notes.mark(client.label, scenario.id, unavailable)
            medians[client.kind] = NaN
          } else {
            const values = rounds.map((r) => r[row.metric])
            cells[client.kind] = summary(values)
            medians[client.kind] = median(values)
          }
        }
        const tn = medians.toolnexus
        const r = (k) => (row.noRatio || !(k in medians) ? "—" : times(ratio(tn, medians[k])))
        rows.push([
          row.label,
          ERAS[era],
          row.unit,
          ...COLUMNS.map((k) => cells[k] ?? "—"),
          r("v1"),
          r("v2"),
          r("floor"),
          ...verdict(row, era, medians),
        ])
      }
    }
  }
  return table(rows, [
    "scenario",
    "era",
    "unit",
    ...COLUMNS,
    "tn/v1",
    "tn/v2",
    "tn/floor",
    "target (toolnexus / client)",
    "met",
  ])
}

/** Plain output for the CLI: aligned tables for people, JSON and CSV for scripts. */
export type Row = Record<string, unknown>;

export function formatTable(rows: readonly Row[], columns?: readonly string[]): string {
  if (rows.length === 0) return "(none)";
  const cols = columns ?? Object.keys(rows[0] ?? {});
  const cells = rows.map((row) => cols.map((c) => cellText(row[c])));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((r) => (r[i] ?? "").length)));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(cols), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

export function formatCsv(rows: readonly Row[], columns?: readonly string[]): string {
  const cols = columns ?? Object.keys(rows[0] ?? {});
  const quote = (v: string) => (/[",\n\r]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  return [cols.join(","), ...rows.map((row) => cols.map((c) => quote(cellText(row[c]))).join(","))].join(
    "\n",
  );
}

export function formatJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 2);
}

function cellText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** Unix seconds as an ISO time, for people. */
export function isoTime(seconds: number | undefined): string {
  return seconds ? new Date(seconds * 1000).toISOString().replace(".000Z", "Z") : "";
}

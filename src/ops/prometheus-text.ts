/**
 * Merges Prometheus text exposition blocks. BullMQ's `exportPrometheusMetrics()` emits HELP and TYPE
 * lines for every queue; concatenated as is, one family would be declared several times and its
 * samples split, which Prometheus rejects. Here each family is declared once with all its samples.
 */
export function mergePrometheusText(blocks: readonly string[]): string {
  const families = new Map<string, { help?: string; type?: string; samples: string[] }>();
  const family = (name: string) => {
    let entry = families.get(name);
    if (!entry) {
      entry = { samples: [] };
      families.set(name, entry);
    }
    return entry;
  };
  for (const block of blocks) {
    for (const raw of block.split("\n")) {
      const line = raw.trim();
      if (line === "") continue;
      const declaration = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (declaration) {
        const [, kind, name = ""] = declaration;
        const entry = family(name);
        if (kind === "HELP") entry.help ??= line;
        else entry.type ??= line;
        continue;
      }
      if (line.startsWith("#")) continue;
      const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
      if (name) family(name).samples.push(line);
    }
  }
  const lines: string[] = [];
  for (const entry of families.values()) {
    if (entry.help) lines.push(entry.help);
    if (entry.type) lines.push(entry.type);
    lines.push(...entry.samples);
  }
  return lines.length > 0 ? `${lines.join("\n")}\n` : "";
}

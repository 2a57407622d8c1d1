/**
 * CPU profiles of a span of a run (the inspector's sampling profiler), written as .cpuprofile files
 * that Chrome DevTools opens, with a short summary of where the time went.
 */
import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** Profiles this process from start() until stop(file). */
export class CpuProfiler {
  #session: Session | undefined;

  async start(): Promise<void> {
    const session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
    this.#session = session;
  }

  /** Writes the profile to `file`; returns its summary lines ("" when it was not started). */
  async stop(file: string): Promise<string> {
    const session = this.#session;
    if (!session) return "";
    this.#session = undefined;
    const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: Profile };
    session.disconnect();
    await writeFile(file, JSON.stringify(profile));
    return summarize(profile);
  }
}

/** Where a frame's code lives, short: a package's name, or the file under the project. */
function place(url: string): string {
  if (url === "") return "(native)";
  const inModules = url.lastIndexOf("node_modules/");
  if (inModules >= 0) {
    const parts = url.slice(inModules + "node_modules/".length).split("/");
    return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
  }
  if (url.startsWith("node:")) return url;
  const project = url.search(/\/(src|bench|dist)\//);
  return project >= 0 ? url.slice(project + 1) : url;
}

/** Self time by place and by function, the largest first, as percents of the span. */
export function summarize(profile: Profile, top = 12): string {
  const byNode = new Map<number, ProfileNode>(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[i] ?? 0));
  });
  const spanUs = profile.endTime - profile.startTime;
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byNode.get(id)?.callFrame;
    if (!frame) continue;
    const where = place(frame.url);
    byPlace.set(where, (byPlace.get(where) ?? 0) + us);
    const name = `${frame.functionName || "(anonymous)"} ${where}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  }
  const idleUs = [...selfUs].reduce((sum, [id, us]) => {
    const name = byNode.get(id)?.callFrame.functionName;
    return name === "(idle)" ? sum + us : sum;
  }, 0);
  const pct = (us: number) => `${((100 * us) / spanUs).toFixed(1)} %`;
  const list = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `    ${pct(us).padStart(7)}  ${k}`)
      .join("\n");
  return [
    `  span ${(spanUs / 1e6).toFixed(1)} s, busy ${pct(spanUs - idleUs)} (all but "(idle)")`,
    "  self time by place:",
    list(byPlace),
    "  self time by function:",
    list(byFunction),
  ].join("\n");
}

import type { Queue } from "bullmq";
import { BUILD_PRIORITY, jobIds, POLL_PRIORITY, type RecordTry } from "../names.js";
import {
  type ActionJobData,
  type ConfirmJobData,
  type PollJobData,
  type SignJobData,
  weightierTrigger,
} from "./queues.js";

// How work enters each queue: one helper per hop, with the job ids that make a repeated enqueue a no-op.

/**
 * A positions poll of the wallet ahead of the sweep. The wallet's one positions poll (BullMQ
 * deduplication) may already wait in the queue: it is moved ahead instead and told why (a watcher's
 * poll already waiting keeps its earlier moment and adds these markets). False when that poll is not
 * waiting (running, or delayed after a failed try): nothing is added, it may have read before the
 * change, and the caller asks again later.
 */
export async function enqueueTargetedPoll(
  poll: Queue<PollJobData>,
  wallet: string,
  target: NonNullable<PollJobData["target"]>,
): Promise<boolean> {
  const jobId = jobIds.targetedPoll(wallet, target.seenAtMs);
  const job = await poll.add(
    "poll",
    { wallet, kind: "positions", tick: Math.floor(target.seenAtMs / 1000), target },
    {
      jobId,
      priority: POLL_PRIORITY.targeted,
      // Run again shortly when the wallet's other poll (orders) held its lock.
      attempts: 5,
      backoff: { type: "fixed", delay: 500 },
      deduplication: { id: jobIds.pollDeduplication(wallet, "positions") },
    },
  );
  if (job.id === jobId) return true;
  const waiting = job.id === undefined ? undefined : await poll.getJob(job.id);
  if (!waiting) return false;
  const state = await waiting.getState();
  if (state !== "prioritized" && state !== "waiting") return false;
  const before = waiting.data.target;
  const merged: typeof target = before
    ? {
        trigger: weightierTrigger(before.trigger, target.trigger),
        seenAtMs: Math.min(before.seenAtMs, target.seenAtMs),
        marketIds: [...new Set([...before.marketIds, ...target.marketIds])],
      }
    : target;
  await waiting.updateData({ ...waiting.data, target: merged });
  await waiting.changePriority({ priority: POLL_PRIORITY.targeted });
  return true;
}

/**
 * The job id names the intent, its record, its try and its build (jobIds), so a repeated enqueue adds
 * nothing, and a record admitted again after the last one was lost gets a job of its own. Only the
 * routine sweep's intents wait behind the others (BUILD_PRIORITY).
 */
export function enqueueBuild(
  actions: Queue<ActionJobData>,
  intentKey: string,
  at: RecordTry,
  build: number,
  priority: number = BUILD_PRIORITY.first,
) {
  const job = buildJob(intentKey, at, build, priority);
  return actions.add(job.name, job.data, job.opts);
}

/** Several intents' first builds in one round trip (BullMQ's addBulk), each as enqueueBuild would add it. */
export function enqueueBuilds(
  actions: Queue<ActionJobData>,
  builds: readonly { intentKey: string; at: RecordTry; build: number }[],
  priority: number = BUILD_PRIORITY.first,
) {
  return actions.addBulk(builds.map(({ intentKey, at, build }) => buildJob(intentKey, at, build, priority)));
}

/** A build job: its id names the intent, its record, its try and its build. */
function buildJob(intentKey: string, at: RecordTry, build: number, priority: number) {
  return {
    name: "build",
    data: { intentKey, build } satisfies ActionJobData,
    opts: { jobId: jobIds.action(intentKey, at, build), priority },
  };
}

/** A sign job, named as a build job is: a repeated enqueue adds nothing. */
export function enqueueSign(sign: Queue<SignJobData>, intentKey: string, at: RecordTry, build: number) {
  return sign.add("sign", { intentKey, build }, { jobId: jobIds.sign(intentKey, at, build) });
}

/**
 * A sent attempt handed to the confirm queue (every watch slot of the sign worker taken). One watch per
 * attempt and sign job: a re-run of the same sign job adds nothing, a sign job that housekeeping
 * started anew (another id) gets a watch of its own.
 */
export async function enqueueConfirm(
  confirm: Queue<ConfirmJobData>,
  intentKey: string,
  build: number,
  attempt: number,
  signJobId: string,
): Promise<void> {
  await confirm.add(
    "confirm",
    { intentKey, build },
    { jobId: jobIds.confirm(signJobId || intentKey, attempt) },
  );
}

import type { Redis } from "ioredis";

/**
 * Makes the commands a client sends in one turn of the event loop leave in one socket write.
 *
 * ioredis writes each command to its socket as it is called: one system call a command. A claim's
 * stages send dozens (the ledger, the attempt record, the rate window, BullMQ's job moves), and a
 * burst of claims sends them from hundreds of tasks at once; the writes were the largest single cost
 * in the keeper's CPU profile (bench/README.md). Here the socket is corked at a turn's first command
 * and uncorked once the turn's callbacks and promise reactions have run (process.nextTick), so the
 * turn's commands go out together in one writev. Replies, order and errors are ioredis's own: the
 * bytes on the wire are the same, only fewer writes carry them.
 *
 * Applied to the connection Keeper and BullMQ's queues and workers share (on a cluster, to each node's
 * connection as the cluster opens it); BullMQ's blocking connections send one command at a time and
 * are left as they are.
 */
export function coalesceWrites(redis: Redis): void {
  let corkedThisTurn = false;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (...args: Parameters<Redis["sendCommand"]>) => {
    const socket = redis.stream as Redis["stream"] | undefined;
    if (!corkedThisTurn && socket !== undefined) {
      corkedThisTurn = true;
      socket.cork();
      process.nextTick(() => {
        corkedThisTurn = false;
        socket.uncork();
      });
    }
    return send(...args);
  };
}

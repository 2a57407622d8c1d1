import type { Socket } from "node:net";
import type { Cluster, Redis } from "ioredis";

const coalesced = new WeakSet<object>();

/**
 * Makes the client's commands of one turn of the event loop leave in one socket write: the socket is
 * corked at the turn's first write and uncorked once the turn's callbacks and promise jobs have run
 * (process.nextTick), so its writes go out together, at once. On this kind of machine a socket write
 * costs about what a command's own work does, and a burst's jobs, woken by one reply, each send their
 * next command in the same turn. Nothing else changes: each command is answered and fails alone, in
 * the order sent. Follows the client onto each new socket (a reconnect); on a cluster, each node's
 * client, those the cluster connects to later included.
 */
export function coalesceWrites(redis: Redis): void {
  if (coalesced.has(redis)) return;
  coalesced.add(redis);
  if (redis.isCluster) {
    const cluster = redis as unknown as Cluster;
    for (const node of cluster.nodes()) coalesceWrites(node);
    cluster.on("+node", (node: Redis) => coalesceWrites(node));
    return;
  }
  const onSocket = () => {
    const stream = (redis as unknown as { stream?: Socket }).stream;
    if (stream && typeof stream.cork === "function") corkEachTurn(stream);
  };
  onSocket();
  redis.on("connect", onSocket);
}

function corkEachTurn(stream: Socket): void {
  if (coalesced.has(stream)) return;
  coalesced.add(stream);
  const write = stream.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    stream.uncork();
  };
  stream.write = function writeInThisTurn(this: Socket, ...args: unknown[]) {
    if (!corked) {
      corked = true;
      stream.cork();
      process.nextTick(uncork);
    }
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as Socket["write"];
}

import type { Socket } from "node:net";
import type { Cluster, Redis } from "ioredis";

/**
 * Every command ioredis sends is a socket write of its own, and in a claim burst the writes cost the
 * keeper more CPU than the commands' own work (a system call each, measured in bench/README.md).
 * Commands issued in one turn of the event loop (the jobs woken by the replies, responses and timers
 * of that turn) are held while the socket is corked and leave together, in one writev, at the end of
 * the turn. Redis then answers them together too. Each command keeps its own reply, order and error;
 * nothing waits past the current turn.
 */
export function coalesceWritesOf(redis: Redis | Cluster): void {
  if ("nodes" in redis && typeof redis.nodes === "function") {
    // A cluster's node connections come and go with failovers and slot refreshes.
    redis.on("+node", (node: Redis) => coalesceWritesOf(node));
    return;
  }
  const client = redis as Redis;
  client.on("connect", () => {
    if (client.stream) coalesceWrites(client.stream as Socket);
  });
  if (client.stream) coalesceWrites(client.stream as Socket);
}

const coalesced = new WeakSet<Socket>();

/**
 * Corks the socket at its first write in a turn and uncorks it in that turn's check phase
 * (setImmediate): the poll phase's callbacks all had their say by then, and the event loop does not
 * block on I/O while an immediate is pending, so a held write never waits for a reply it needs.
 */
export function coalesceWrites(socket: Socket): void {
  if (coalesced.has(socket)) return;
  coalesced.add(socket);
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  const write = socket.write;
  socket.write = function (this: Socket, ...args: Parameters<Socket["write"]>) {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(uncork);
    }
    return write.apply(this, args);
  } as Socket["write"];
}

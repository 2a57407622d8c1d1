import { type ChainLogger, LocalChain } from "./local-chain.js";
import { LocalChainPort } from "./local-chain-port.js";
import { startRpcServer } from "./rpc-server.js";
import { createSandboxAssets, type SandboxAssets } from "./sandbox-assets.js";
import { TxFactory, type TxFactoryOptions } from "./tx-factory.js";

export interface StartLocalChainOptions {
  seed?: number;
  /** RPC port (default 8899; 0 = random). */
  port?: number;
  host?: string;
  slotMs?: number;
  now?: () => number;
  txFactory?: TxFactoryOptions;
  logger?: ChainLogger;
}

export interface RunningLocalChain {
  readonly chain: LocalChain;
  readonly assets: SandboxAssets;
  readonly txFactory: TxFactory;
  /** The chain as the sandbox world sees it (WorldChainPort). */
  readonly port: LocalChainPort;
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the chain, its assets, the tx factory and the RPC server in one call. */
export async function startLocalChain(options: StartLocalChainOptions = {}): Promise<RunningLocalChain> {
  const seed = options.seed ?? 1;
  const chain = new LocalChain({
    seed,
    ...(options.slotMs === undefined ? {} : { slotMs: options.slotMs }),
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  const assets = createSandboxAssets(chain, { seed });
  const txFactory = new TxFactory(chain, assets, options.txFactory);
  const port = new LocalChainPort(chain, assets, txFactory, options.logger);
  let server: Awaited<ReturnType<typeof startRpcServer>>;
  try {
    server = await startRpcServer(chain, { host: options.host ?? "127.0.0.1", port: options.port ?? 8899 });
  } catch (error) {
    chain.stop();
    throw error;
  }
  return {
    chain,
    assets,
    txFactory,
    port,
    url: server.url,
    async close() {
      // Every step runs even if one fails.
      port.close();
      chain.stop();
      await server.close();
    },
  };
}

export { Congestion, type CongestionSettings, congestionWalk, RECENT_FEE_SLOTS } from "./congestion.js";
export { type LandedEvent, LocalChain, type LocalChainOptions } from "./local-chain.js";
export { LocalChainPort } from "./local-chain-port.js";
export { startRpcServer } from "./rpc-server.js";
export {
  type ChainTokenSpec,
  createSandboxAssets,
  deriveKeypair,
  type SandboxAssets,
  USDC_DECIMALS,
} from "./sandbox-assets.js";
export { type BuiltTransaction, type SubmitResult, TxFactory } from "./tx-factory.js";

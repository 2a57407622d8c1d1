import type { CallOptions, HttpTransport, ParamsInput, ResponseOf } from "./http.js";

/** Swap build (/swap/v2): a quote plus the raw instructions to assemble (api-gaps: Swap build). */
export interface SwapApi {
  /** `amount` may be a bigint; it is sent as its exact decimal digits. */
  build(params: ParamsInput<"buildSwap">, options?: CallOptions): Promise<ResponseOf<"buildSwap">>;
}

export function swapApi(http: HttpTransport): SwapApi {
  return { build: (params, options) => http.request("buildSwap", { params }, options) };
}

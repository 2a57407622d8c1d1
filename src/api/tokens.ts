import type { CallOptions, HttpTransport, ParamsInput, ResponseOf } from "./http.js";

/** Token search (/ultra/v1). The area is superseded by /swap/v2 but still answers. */
export interface TokensApi {
  /** `query`: symbols, names or mints, comma-separated (at most 100 terms). `[]` when nothing matches. */
  search(params: ParamsInput<"searchTokens">, options?: CallOptions): Promise<ResponseOf<"searchTokens">>;
}

export function tokensApi(http: HttpTransport): TokensApi {
  return { search: (params, options) => http.request("searchTokens", { params }, options) };
}

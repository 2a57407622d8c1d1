import type { CallOptions, HttpTransport, ParamsInput, ResponseOf } from "./http.js";

/** The send area (/send/v1): invite history of an address, one page (`page` >= 1) at a time. */
export interface SendApi {
  inviteHistory(
    params: ParamsInput<"inviteHistory">,
    options?: CallOptions,
  ): Promise<ResponseOf<"inviteHistory">>;
}

export function sendApi(http: HttpTransport): SendApi {
  return { inviteHistory: (params, options) => http.request("inviteHistory", { params }, options) };
}

import type { BodyInput, CallOptions, HttpTransport, ResponseOf } from "./http.js";

/** Recurring (DCA) orders (/recurring/v1): build a create transaction, execute the signed one. */
export interface RecurringApi {
  /** `params` holds exactly one of `time` or `price`. */
  createOrder(
    body: BodyInput<"createRecurringOrder">,
    options?: CallOptions,
  ): Promise<ResponseOf<"createRecurringOrder">>;
  /** Submits a signed transaction: never retried after it may have reached the service. */
  execute(
    body: BodyInput<"executeRecurring">,
    options?: CallOptions,
  ): Promise<ResponseOf<"executeRecurring">>;
}

export function recurringApi(http: HttpTransport): RecurringApi {
  return {
    createOrder: (body, options) => http.request("createRecurringOrder", { body }, options),
    execute: (body, options) => http.request("executeRecurring", { body }, options),
  };
}

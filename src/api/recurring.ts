import type { BodyInput, CallOptions, HttpTransport, ParamsInput, ResponseOf } from "./http.js";

/** Recurring (DCA) orders (/recurring/v1): build create and cancel transactions, execute signed ones, list. */
export interface RecurringApi {
  /** `params` holds exactly one of `time` or `price`. */
  createOrder(
    body: BodyInput<"createRecurringOrder">,
    options?: CallOptions,
  ): Promise<ResponseOf<"createRecurringOrder">>;
  /** Closes an order; what is left of its deposit goes back to the user. */
  cancelOrder(
    body: BodyInput<"cancelRecurringOrder">,
    options?: CallOptions,
  ): Promise<ResponseOf<"cancelRecurringOrder">>;
  /** One page of a user's orders, `active` or `history`, under the key of the asked `recurringType`. */
  getOrders(
    params: ParamsInput<"getRecurringOrders">,
    options?: CallOptions,
  ): Promise<ResponseOf<"getRecurringOrders">>;
  /** Submits a signed transaction: never retried after it may have reached the service. */
  execute(
    body: BodyInput<"executeRecurring">,
    options?: CallOptions,
  ): Promise<ResponseOf<"executeRecurring">>;
}

export function recurringApi(http: HttpTransport): RecurringApi {
  return {
    createOrder: (body, options) => http.request("createRecurringOrder", { body }, options),
    cancelOrder: (body, options) => http.request("cancelRecurringOrder", { body }, options),
    getOrders: (params, options) => http.request("getRecurringOrders", { params }, options),
    execute: (body, options) => http.request("executeRecurring", { body }, options),
  };
}

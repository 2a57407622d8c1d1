import type { BodyInput, CallOptions, HttpTransport, ParamsInput, ResponseOf } from "./http.js";

/** Trigger (limit) orders (/trigger/v1): build create and cancel transactions, execute signed ones, list. */
export interface TriggerApi {
  createOrder(
    body: BodyInput<"createTriggerOrder">,
    options?: CallOptions,
  ): Promise<ResponseOf<"createTriggerOrder">>;
  cancelOrder(
    body: BodyInput<"cancelTriggerOrder">,
    options?: CallOptions,
  ): Promise<ResponseOf<"cancelTriggerOrder">>;
  /** Several orders of one maker (every open one without `orders`): one requestId, one or more transactions. */
  cancelOrders(
    body: BodyInput<"cancelTriggerOrders">,
    options?: CallOptions,
  ): Promise<ResponseOf<"cancelTriggerOrders">>;
  /** One page of a maker's orders, `active` or `history`. */
  getOrders(
    params: ParamsInput<"getTriggerOrders">,
    options?: CallOptions,
  ): Promise<ResponseOf<"getTriggerOrders">>;
  /** Submits a signed transaction: never retried after it may have reached the service. */
  execute(body: BodyInput<"executeTrigger">, options?: CallOptions): Promise<ResponseOf<"executeTrigger">>;
}

export function triggerApi(http: HttpTransport): TriggerApi {
  return {
    createOrder: (body, options) => http.request("createTriggerOrder", { body }, options),
    cancelOrder: (body, options) => http.request("cancelTriggerOrder", { body }, options),
    cancelOrders: (body, options) => http.request("cancelTriggerOrders", { body }, options),
    getOrders: (params, options) => http.request("getTriggerOrders", { params }, options),
    execute: (body, options) => http.request("executeTrigger", { body }, options),
  };
}

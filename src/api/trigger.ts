import type { BodyInput, CallOptions, HttpTransport, ResponseOf } from "./http.js";

/** Trigger (limit) orders (/trigger/v1): build create and cancel transactions, execute signed ones. */
export interface TriggerApi {
  createOrder(
    body: BodyInput<"createTriggerOrder">,
    options?: CallOptions,
  ): Promise<ResponseOf<"createTriggerOrder">>;
  cancelOrder(
    body: BodyInput<"cancelTriggerOrder">,
    options?: CallOptions,
  ): Promise<ResponseOf<"cancelTriggerOrder">>;
  /** Submits a signed transaction: never retried after it may have reached the service. */
  execute(body: BodyInput<"executeTrigger">, options?: CallOptions): Promise<ResponseOf<"executeTrigger">>;
}

export function triggerApi(http: HttpTransport): TriggerApi {
  return {
    createOrder: (body, options) => http.request("createTriggerOrder", { body }, options),
    cancelOrder: (body, options) => http.request("cancelTriggerOrder", { body }, options),
    execute: (body, options) => http.request("executeTrigger", { body }, options),
  };
}

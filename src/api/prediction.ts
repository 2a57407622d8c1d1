import type { BodyInput, CallOptions, HttpTransport, ParamsInput, ResponseOf } from "./http.js";

type Without<T, K extends PropertyKey> = Omit<T, K & keyof T>;

/** The prediction area (/prediction/v1): its endpoints. Path parameters come first, as arguments. */
export interface PredictionApi {
  listEvents(params?: ParamsInput<"listEvents">, options?: CallOptions): Promise<ResponseOf<"listEvents">>;
  getEvent(
    eventId: string,
    params?: Without<ParamsInput<"getEvent">, "eventId">,
    options?: CallOptions,
  ): Promise<ResponseOf<"getEvent">>;
  searchEvents(
    params: ParamsInput<"searchEvents">,
    options?: CallOptions,
  ): Promise<ResponseOf<"searchEvents">>;
  listEventMarkets(
    eventId: string,
    range?: Without<ParamsInput<"listEventMarkets">, "eventId">,
    options?: CallOptions,
  ): Promise<ResponseOf<"listEventMarkets">>;
  getEventMarket(
    eventId: string,
    marketId: string,
    options?: CallOptions,
  ): Promise<ResponseOf<"getEventMarket">>;
  getMarket(marketId: string, options?: CallOptions): Promise<ResponseOf<"getMarket">>;
  listPositions(
    params?: ParamsInput<"listPositions">,
    options?: CallOptions,
  ): Promise<ResponseOf<"listPositions">>;
  /** One position, as the service reads it now (404, a PermanentApiError, when it does not know it). */
  getPosition(positionPubkey: string, options?: CallOptions): Promise<ResponseOf<"getPosition">>;
  listOrders(params?: ParamsInput<"listOrders">, options?: CallOptions): Promise<ResponseOf<"listOrders">>;
  listHistory(params?: ParamsInput<"listHistory">, options?: CallOptions): Promise<ResponseOf<"listHistory">>;
  /** Unsigned transactions selling every open position of the owner. */
  closeAllPositions(
    body: BodyInput<"closeAllPositions">,
    options?: CallOptions,
  ): Promise<ResponseOf<"closeAllPositions">>;
  /** An unsigned transaction selling all contracts of one position. */
  closePosition(
    positionPubkey: string,
    body: BodyInput<"closePosition">,
    options?: CallOptions,
  ): Promise<ResponseOf<"closePosition">>;
  /** An unsigned transaction claiming the payout of a winning position. */
  claimPosition(
    positionPubkey: string,
    body: BodyInput<"claimPosition">,
    options?: CallOptions,
  ): Promise<ResponseOf<"claimPosition">>;
  /** An unsigned transaction opening (or adding to) a position. */
  createOrder(body: BodyInput<"createOrder">, options?: CallOptions): Promise<ResponseOf<"createOrder">>;
  /** Submits a signed build through the service (Forecast builds go only this way). */
  execute(
    body: BodyInput<"executePrediction">,
    options?: CallOptions,
  ): Promise<ResponseOf<"executePrediction">>;
  /** The service's own client's form of execute: the signature only. */
  executeOrder(body: BodyInput<"executeOrder">, options?: CallOptions): Promise<ResponseOf<"executeOrder">>;
  leaderboards(
    params?: ParamsInput<"leaderboards">,
    options?: CallOptions,
  ): Promise<ResponseOf<"leaderboards">>;
}

export function predictionApi(http: HttpTransport): PredictionApi {
  return {
    listEvents: (params = {}, options) => http.request("listEvents", { params }, options),
    getEvent: (eventId, params = {}, options) =>
      http.request("getEvent", { params: { ...params, eventId } }, options),
    searchEvents: (params, options) => http.request("searchEvents", { params }, options),
    listEventMarkets: (eventId, range = {}, options) =>
      http.request("listEventMarkets", { params: { ...range, eventId } }, options),
    getEventMarket: (eventId, marketId, options) =>
      http.request("getEventMarket", { params: { eventId, marketId } }, options),
    getMarket: (marketId, options) => http.request("getMarket", { params: { marketId } }, options),
    listPositions: (params = {}, options) => http.request("listPositions", { params }, options),
    getPosition: (positionPubkey, options) =>
      http.request("getPosition", { params: { positionPubkey } }, options),
    listOrders: (params = {}, options) => http.request("listOrders", { params }, options),
    listHistory: (params = {}, options) => http.request("listHistory", { params }, options),
    closeAllPositions: (body, options) => http.request("closeAllPositions", { body }, options),
    closePosition: (positionPubkey, body, options) =>
      http.request("closePosition", { params: { positionPubkey }, body }, options),
    claimPosition: (positionPubkey, body, options) =>
      http.request("claimPosition", { params: { positionPubkey }, body }, options),
    createOrder: (body, options) => http.request("createOrder", { body }, options),
    execute: (body, options) => http.request("executePrediction", { body }, options),
    executeOrder: (body, options) => http.request("executeOrder", { body }, options),
    leaderboards: (params = {}, options) => http.request("leaderboards", { params }, options),
  };
}

export * from "./common.js";
export * from "./prediction.js";
export * from "./recurring.js";
export * from "./send.js";
export * from "./swap.js";
export * from "./tokens.js";
export * from "./trigger.js";

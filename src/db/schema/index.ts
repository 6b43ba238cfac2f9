export * from "./accounts";
export * from "./forms";
export * from "./contacts";
export * from "./messages";
export * from "./events";
export * from "./inbound";
export * from "./broadcasts";
export * from "./account-settings";

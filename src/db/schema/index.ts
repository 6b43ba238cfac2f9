export * from "./accounts";
export * from "./forms";
export * from "./contacts";
export * from "./messages";
export * from "./devices";
export * from "./inbound";
export * from "./broadcasts";

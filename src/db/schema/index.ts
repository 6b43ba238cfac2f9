export * from "./accounts";
export * from "./forms";
export * from "./contacts";
export * from "./messages";
export * from "./devices";
export * from "./events";
export * from "./inbound";
export * from "./broadcasts";
export * from "./sessions";
export * from "./account-settings";
export * from "./intake";
export * from "./rollups";
export * from "./server-settings";
export * from "./users";
export * from "./keyword-replies";

export * from "./consent-history";

export * from "./smsgate";

export * from "./smsgate-settings";

export * from "./automations";

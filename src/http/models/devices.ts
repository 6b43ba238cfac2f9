import { t } from "elysia";
import { checked, Envelope, literals, NullableString, NullableTimestamp, Timestamp } from "./common";
import { Capacity, DeviceLimits, LimitsInput, SimLimitsInput } from "./sending";
import { DEVICE_NAME_MAX, REGISTRATION_TOKEN_HOURS_DEFAULT, REGISTRATION_TOKEN_HOURS_MAX } from "../../services/device-registration";

/** The app's SimCard (slotIndex, simNumber, phoneNumber, carrierName, iccid; the app redacts the last three). */
const SimCard = t.Object({}, { additionalProperties: true });

export const MobileRegisterBody = t.Object({
  name: t.Optional(t.Unknown({ description: "the phone's name (the app sends MANUFACTURER/PRODUCT)" })),
  pushToken: t.Optional(t.Unknown({ description: "ignored: Textwire never uses FCM" })),
  simCards: t.Optional(t.Unknown({ description: "the app's SimCard list" })),
});

export const MobileRegisterResponse = t.Object({
  id: t.String(),
  token: t.String({ description: "the device token (Bearer), shown once" }),
  login: t.String({ description: "the account id" }),
  password: t.Null({ description: "always null: Textwire has no per-user login for phones" }),
});

export const MobilePatchDeviceBody = t.Object({
  id: t.Optional(t.Unknown()),
  pushToken: t.Optional(t.Unknown()),
  simCards: t.Optional(t.Unknown()),
});

export const MobileDeviceResponse = t.Object({
  externalIp: t.String(),
  device: t.Union([t.Object({ id: t.String(), name: t.String(), createdAt: t.String(), updatedAt: t.String(), lastSeen: t.Union([t.String(), t.Null()]) }), t.Null()]),
});

export const MobileMessagesQuery = t.Object({
  order: t.Optional(t.String({ description: "lifo (the app's default) | fifo: order within each priority of the batch" })),
});

export const MobileMessage = t.Object({
  id: t.String({ description: "the Textwire message id" }),
  textMessage: t.Object({ text: t.String() }),
  phoneNumbers: t.Array(t.String({ description: "E.164" })),
  simNumber: t.Union([t.Integer({ minimum: 1, maximum: 3 }), t.Null()], { description: "the SIM an SMSGate client chose (third-party API), else null: the phone's default" }),
  withDeliveryReport: t.Boolean(),
  isEncrypted: t.Boolean(),
  priority: t.Integer({ description: "urgent 100 (skips the phone's delays), high 50, normal 0, low -50" }),
  createdAt: t.String(),
});

export const MobileStatesBody = t.Array(t.Unknown(), {
  description: "the app's [{id, state: Processed|Sent|Delivered|Failed, recipients: [{phoneNumber, state, error}], states: {State: date}}]",
});

export const MobileWebhook = t.Object({ id: t.String(), url: t.String(), event: t.String() });

/** The app's settings; the optional keys come from the account's SMSGate settings document (/3rdparty/v1/settings). */
export const MobileSettings = t.Object({
  messages: t.Object({
    send_interval_min: t.Integer(), send_interval_max: t.Integer(), limit_period: t.String(), limit_value: t.Integer(),
    sim_selection_mode: t.Optional(t.String()), log_lifetime_days: t.Optional(t.Integer()), processing_order: t.Optional(t.String()),
  }),
  ping: t.Object({ interval_seconds: t.Integer() }),
  webhooks: t.Object({ signing_key: t.Union([t.String(), t.Null()]), retry_count: t.Optional(t.Integer()), internet_required: t.Optional(t.Boolean()) }),
  gateway: t.Object({ notification_channel: t.String() }),
  logs: t.Optional(t.Object({ lifetime_days: t.Integer() })),
  receiver: t.Optional(t.Object({ content_provider_enabled: t.Boolean() })),
});

export const DeviceIdParam = t.Object({ deviceId: t.String({ minLength: 1, maxLength: 200 }) });

export const RegistrationTokenBody = t.Optional(
  t.Object({
    reusable: t.Optional(checked(t.Boolean(), "true: any number of phones may register with it until it expires (default false: one phone)")),
    expiresInHours: t.Optional(checked(t.Number({ exclusiveMinimum: 0, maximum: REGISTRATION_TOKEN_HOURS_MAX }), `hours until it expires, above 0 and at most ${REGISTRATION_TOKEN_HOURS_MAX} (default ${REGISTRATION_TOKEN_HOURS_DEFAULT})`)),
  }),
);

export const DeviceView = t.Object({
  id: t.String(),
  name: t.String(),
  kind: literals(["smsgate", "recipe"]),
  appVersion: NullableString,
  simCards: t.Array(t.Unknown(), { description: "the app's SIM cards as it reported them" }),
  lastSeenAt: NullableTimestamp,
  lastIp: NullableString,
  battery: t.Union([t.Integer(), t.Null()], { description: "percent, when the app reported it" }),
  sendRatePerMinute: t.Integer({ description: "messages per minute this phone is handed (its own, else the server's --send-rate-per-minute)" }),
  sentToday: t.Integer({ minimum: 0 }),
  failedToday: t.Integer({ minimum: 0 }),
  online: t.Boolean(),
  limits: DeviceLimits,
  capacity: Capacity,
});

export const DevicePatchBody = t.Object({
  name: t.Optional(checked(t.String({ minLength: 1, maxLength: DEVICE_NAME_MAX }), `1-${DEVICE_NAME_MAX} characters`)),
  sendRatePerMinute: t.Optional(
    checked(t.Union([t.Integer({ minimum: 1, maximum: 10_000 }), t.Null()]), "messages per minute this phone is handed (1-10000), null = the server's --send-rate-per-minute"),
  ),
  limits: t.Optional(LimitsInput),
  sims: t.Optional(SimLimitsInput),
});

// ---------------------------------------------------------------------------------------------
// Answers of /v1/devices

export const RegistrationTokenAnswer = Envelope(
  t.Object({
    token: t.String({ description: "type it into the SMSGate app (shown once; only its hash is kept)" }),
    reusable: t.Boolean(),
    expiresAt: Timestamp,
    mobileApiUrls: t.Array(t.String(), {
      description:
        "server addresses to type into the app, best first: --public-url when set; else this request's own address (unless it is localhost) and the server's network addresses with its port",
    }),
  }),
);
export const DeviceListAnswer = Envelope(t.Object({ devices: t.Array(DeviceView) }));
export const DeviceAnswer = Envelope(t.Object({ device: DeviceView }));

import { t } from "elysia";
import { checked, Envelope } from "./common";

const QuietHours = t.Object({ start: t.String({ description: "HH:MM, 24-hour clock" }), end: t.String({ description: "HH:MM" }) });

/** The service checks each field in plain words (a 400 names it); typed here for the document. */
export const NotificationSettingsBody = t.Object(
  {
    phoneNumber: t.Optional(checked(t.Union([t.String(), t.Null()]), "your mobile number, e.g. +14155552671 (a US number may be written nationally); null removes it")),
    notifications: t.Optional(
      checked(
        t.Object({
          submissions: t.Optional(t.Boolean({ description: "a text (or e-mail) for each new form request" })),
          replies: t.Optional(t.Boolean({ description: "a text (or e-mail) for each customer's reply" })),
          email: t.Optional(t.Boolean({ description: "also by e-mail, to your sign-in address (when the server has SMTP)" })),
        }),
        "what you want to hear about; fields not given stay",
      ),
    ),
    quietHours: t.Optional(checked(t.Union([QuietHours, t.Null()]), "no team texts between start and end, in the business's time zone; null: any time")),
  },
  { additionalProperties: true },
);

export const NotificationSettingsAnswer = Envelope(
  t.Object({
    phoneNumber: t.Union([t.String(), t.Null()], { description: "E.164" }),
    notifications: t.Object({ submissions: t.Boolean(), replies: t.Boolean(), email: t.Boolean() }),
    quietHours: t.Union([QuietHours, t.Null()]),
    emailAvailable: t.Boolean({ description: "whether the server can send e-mail (the operator set --smtp-url)" }),
  }),
);

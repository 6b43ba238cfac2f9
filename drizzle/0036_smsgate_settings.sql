-- The account's settings document of SMSGate's third-party API (GET/PUT/PATCH
-- /3rdparty/v1/settings): JSON in SMSGate's camelCase shape, unknown keys kept as the client gave
-- them. The account's phones get it mapped onto their own settings (docs/api-decisions.md, "SMSGate
-- third-party API: devices, health, settings"). One row per account that set any.
CREATE TABLE `smsgate_settings` (
	`account_id` text PRIMARY KEY NOT NULL,
	`settings` text DEFAULT '{}' NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);

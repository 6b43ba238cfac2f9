-- SMSGate's whole client API (docs/api-decisions.md, "The SMSGate ecosystem, every call"):
-- what a phone reported with a received text (its SIM slot and its own number), the per-account
-- secret that signs the short-lived JWTs of POST /3rdparty/v1/auth/token, and the tokens issued
-- (kept until they expire so each can be revoked by its jti).
ALTER TABLE `inbound_messages` ADD `sim_number` integer;
--> statement-breakpoint
ALTER TABLE `inbound_messages` ADD `recipient` text;
--> statement-breakpoint
ALTER TABLE `smsgate_clients` ADD `token_secret` text;
--> statement-breakpoint
CREATE TABLE `smsgate_tokens` (
	`jti` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`key_id` text NOT NULL,
	`token_use` text NOT NULL,
	`parent_jti` text,
	`scopes` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `smsgate_tokens_account_idx` ON `smsgate_tokens` (`account_id`, `expires_at`);
--> statement-breakpoint
CREATE INDEX `smsgate_tokens_parent_idx` ON `smsgate_tokens` (`parent_jti`);

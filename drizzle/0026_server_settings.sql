-- Server-wide settings an operator changes from the dashboard (docs/api-decisions.md, "Continuous
-- replication with Litestream"): one row per setting, the value as text. The first is the
-- replica address (`replication.url`); a --replicate flag given at start wins over it.
CREATE TABLE `server_settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` text NOT NULL
);

CREATE TABLE `access_log` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`at` integer NOT NULL,
	`application_id` text,
	`api_key_id` text,
	`api_key_name` text,
	`principal` text,
	`face` text NOT NULL,
	`client` text,
	`tool` text,
	`operation` text NOT NULL,
	`grant_id` text,
	`object_ids` text,
	`status` integer NOT NULL,
	`error_type` text,
	`address` text,
	`request_id` text
);
--> statement-breakpoint
CREATE INDEX `access_log_application_idx` ON `access_log` (`application_id`,`seq`);--> statement-breakpoint
CREATE INDEX `access_log_at_idx` ON `access_log` (`at`);--> statement-breakpoint
ALTER TABLE `outbound_messages` ADD `provenance` text;--> statement-breakpoint
ALTER TABLE `scheduled_messages` ADD `provenance` text;
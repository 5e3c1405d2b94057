CREATE TABLE `approvals` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`status` text NOT NULL,
	`kind` text NOT NULL,
	`draft_id` text,
	`draft_version` integer,
	`checks` text NOT NULL,
	`composition` text NOT NULL,
	`raw_hash` text NOT NULL,
	`sha256` text NOT NULL,
	`header_message_id` text NOT NULL,
	`subject` text NOT NULL,
	`recipients` text NOT NULL,
	`reply_to_message_id` text,
	`thread_id` text,
	`requested_by_key_id` text,
	`provenance` text,
	`decided_by_key_id` text,
	`decided_by_name` text,
	`decision_reason` text,
	`sent_message_id` text,
	`error` text,
	`expires_at` integer NOT NULL,
	`decided_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `approvals_application_idx` ON `approvals` (`application_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `approvals_grant_idx` ON `approvals` (`grant_id`,`status`);--> statement-breakpoint
CREATE INDEX `approvals_pending_idx` ON `approvals` (`status`,`expires_at`);--> statement-breakpoint
CREATE TABLE `send_reviews` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`message_id` text NOT NULL,
	`subject` text NOT NULL,
	`recipients` text NOT NULL,
	`provenance` text,
	`status` text NOT NULL,
	`note` text,
	`reviewed_by_key_id` text,
	`reviewed_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `send_reviews_application_idx` ON `send_reviews` (`application_id`,`status`,`created_at`);--> statement-breakpoint
CREATE TABLE `untrusted_reads` (
	`reader` text NOT NULL,
	`message_id` text NOT NULL,
	`application_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`thread_id` text,
	`reasons` text NOT NULL,
	`at` integer NOT NULL,
	PRIMARY KEY(`reader`, `message_id`)
);
--> statement-breakpoint
CREATE INDEX `untrusted_reads_reader_idx` ON `untrusted_reads` (`reader`,`at`);--> statement-breakpoint
ALTER TABLE `grants` ADD `oversight_mode` text;--> statement-breakpoint
ALTER TABLE `grants` ADD `suspended_at` integer;--> statement-breakpoint
ALTER TABLE `grants` ADD `suspended_reason` text;--> statement-breakpoint
ALTER TABLE `policies` ADD `oversight` text DEFAULT '{}' NOT NULL;
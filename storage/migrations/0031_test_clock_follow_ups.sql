CREATE TABLE `follow_ups` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`message_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`after_seq` integer NOT NULL,
	`body` text NOT NULL,
	`due_at` integer NOT NULL,
	`status` text NOT NULL,
	`sent_message_id` text,
	`reply_message_id` text,
	`reason` text,
	`requested_by` text,
	`closed_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `follow_ups_status_due_idx` ON `follow_ups` (`status`,`due_at`);--> statement-breakpoint
CREATE INDEX `follow_ups_thread_idx` ON `follow_ups` (`thread_id`);--> statement-breakpoint
CREATE INDEX `follow_ups_grant_idx` ON `follow_ups` (`grant_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `follow_ups_message_idx` ON `follow_ups` (`message_id`);--> statement-breakpoint
ALTER TABLE `applications` ADD `test_clock_at` integer;
CREATE TABLE `calendar_hold_slots` (
	`hold_id` text NOT NULL,
	`application_id` text NOT NULL,
	`email` text NOT NULL,
	`start_time` integer NOT NULL,
	`end_time` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`hold_id`) REFERENCES `calendar_holds`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `calendar_hold_slots_email_idx` ON `calendar_hold_slots` (`application_id`,`email`,`end_time`);--> statement-breakpoint
CREATE TABLE `calendar_holds` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`status` text DEFAULT 'held' NOT NULL,
	`participants` text NOT NULL,
	`slots` text NOT NULL,
	`title` text,
	`expires_at` integer NOT NULL,
	`event_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `calendar_holds_status_expires_idx` ON `calendar_holds` (`status`,`expires_at`);
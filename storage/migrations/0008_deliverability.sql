CREATE TABLE `delivery_reports` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`grant_id` text,
	`outbound_id` text NOT NULL,
	`message_id` text,
	`recipient` text NOT NULL,
	`kind` text NOT NULL,
	`bounce_type` text,
	`status_code` text,
	`smtp_code` integer,
	`reason` text NOT NULL,
	`source` text NOT NULL,
	`raw_hash` text,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `delivery_reports_message_idx` ON `delivery_reports` (`outbound_id`,`recipient`);--> statement-breakpoint
CREATE INDEX `delivery_reports_grant_idx` ON `delivery_reports` (`grant_id`,`at`);--> statement-breakpoint
CREATE TABLE `domain_daily_sends` (
	`domain_id` text NOT NULL,
	`day` integer NOT NULL,
	`sent` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`domain_id`, `day`),
	FOREIGN KEY (`domain_id`) REFERENCES `domains`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `engagement_events` (
	`id` text PRIMARY KEY NOT NULL,
	`message_id` text NOT NULL,
	`kind` text NOT NULL,
	`link_index` integer,
	`ip` text,
	`user_agent` text,
	`reply_message_id` text,
	`counted` integer NOT NULL,
	`flag` text,
	`at` integer NOT NULL,
	FOREIGN KEY (`message_id`) REFERENCES `tracked_messages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `engagement_events_message_idx` ON `engagement_events` (`message_id`,`at`);--> statement-breakpoint
CREATE TABLE `grant_sending_days` (
	`grant_id` text NOT NULL,
	`day` integer NOT NULL,
	`sent` integer DEFAULT 0 NOT NULL,
	`hard_bounces` integer DEFAULT 0 NOT NULL,
	`soft_bounces` integer DEFAULT 0 NOT NULL,
	`complaints` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`grant_id`, `day`),
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `sending_state_changes` (
	`id` text PRIMARY KEY NOT NULL,
	`grant_id` text NOT NULL,
	`state` text NOT NULL,
	`reason` text NOT NULL,
	`actor` text NOT NULL,
	`at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sending_state_changes_grant_idx` ON `sending_state_changes` (`grant_id`,`at`);--> statement-breakpoint
CREATE TABLE `service_keys` (
	`name` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `suppressions` (
	`application_id` text NOT NULL,
	`email` text NOT NULL,
	`reason` text NOT NULL,
	`report_id` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`application_id`, `email`),
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `suppressions_created_idx` ON `suppressions` (`application_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `tracked_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`message_id` text NOT NULL,
	`application_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`outbound_id` text NOT NULL,
	`header_message_id` text NOT NULL,
	`thread_id` text,
	`opens` integer DEFAULT false NOT NULL,
	`links` integer DEFAULT false NOT NULL,
	`thread_replies` integer DEFAULT false NOT NULL,
	`label` text,
	`sent_at` integer NOT NULL,
	`opens_count` integer DEFAULT 0 NOT NULL,
	`last_open_at` integer,
	`clicks_count` integer DEFAULT 0 NOT NULL,
	`replies_count` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `tracked_messages_header_idx` ON `tracked_messages` (`grant_id`,`header_message_id`);--> statement-breakpoint
CREATE INDEX `tracked_messages_message_idx` ON `tracked_messages` (`message_id`);--> statement-breakpoint
CREATE INDEX `tracked_messages_application_idx` ON `tracked_messages` (`application_id`);--> statement-breakpoint
CREATE TABLE `tracking_links` (
	`message_id` text NOT NULL,
	`link_index` integer NOT NULL,
	`url` text NOT NULL,
	`clicks_count` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`message_id`, `link_index`),
	FOREIGN KEY (`message_id`) REFERENCES `tracked_messages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `domains` ADD `warm_up` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `domains` ADD `warm_up_started_at` integer;--> statement-breakpoint
ALTER TABLE `grants` ADD `sending_paused_at` integer;--> statement-breakpoint
ALTER TABLE `grants` ADD `sending_paused_reason` text;
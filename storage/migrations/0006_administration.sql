CREATE TABLE `grant_daily_usage` (
	`grant_id` text NOT NULL,
	`day` integer NOT NULL,
	`received` integer DEFAULT 0 NOT NULL,
	`sent` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`grant_id`, `day`),
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `list_items` (
	`id` text PRIMARY KEY NOT NULL,
	`list_id` text NOT NULL,
	`value` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`list_id`) REFERENCES `lists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `list_items_value_idx` ON `list_items` (`list_id`,`value`);--> statement-breakpoint
CREATE INDEX `list_items_order_idx` ON `list_items` (`list_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `lists` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`type` text NOT NULL,
	`items_count` integer DEFAULT 0 NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `lists_application_idx` ON `lists` (`application_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `policies` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`name` text NOT NULL,
	`limits` text DEFAULT '{}' NOT NULL,
	`spam_detection` text DEFAULT '{}' NOT NULL,
	`options` text DEFAULT '{}' NOT NULL,
	`rule_ids` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `policies_application_idx` ON `policies` (`application_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `rule_evaluations` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`message_id` text,
	`stage` text NOT NULL,
	`input` text NOT NULL,
	`matched_rule_ids` text DEFAULT '[]' NOT NULL,
	`applied_actions` text DEFAULT '{}' NOT NULL,
	`verdicts` text DEFAULT '{}' NOT NULL,
	`evaluated_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `rule_evaluations_grant_idx` ON `rule_evaluations` (`grant_id`,`evaluated_at`,`id`);--> statement-breakpoint
CREATE TABLE `rules` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`priority` integer DEFAULT 10 NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`trigger` text DEFAULT 'inbound' NOT NULL,
	`match_operator` text DEFAULT 'all' NOT NULL,
	`conditions` text DEFAULT '[]' NOT NULL,
	`actions` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `rules_application_idx` ON `rules` (`application_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `messages` ADD `verdict` text;
CREATE TABLE `domain_sending_state_changes` (
	`id` text PRIMARY KEY NOT NULL,
	`domain_id` text NOT NULL,
	`state` text NOT NULL,
	`reason` text NOT NULL,
	`actor` text NOT NULL,
	`at` integer NOT NULL,
	FOREIGN KEY (`domain_id`) REFERENCES `domains`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `domain_sending_state_changes_domain_idx` ON `domain_sending_state_changes` (`domain_id`,`at`);--> statement-breakpoint
ALTER TABLE `domains` ADD `sending_paused_at` integer;--> statement-breakpoint
ALTER TABLE `domains` ADD `sending_paused_reason` text;--> statement-breakpoint
ALTER TABLE `domain_daily_sends` ADD `rated_sent` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `domain_daily_sends` ADD `hard_bounces` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `domain_daily_sends` ADD `soft_bounces` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `domain_daily_sends` ADD `complaints` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Sends before this migration count toward the domain's rates too.
UPDATE `domain_daily_sends` SET `rated_sent` = `sent`;
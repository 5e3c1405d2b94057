CREATE TABLE `dmarc_reports` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`domain_id` text NOT NULL,
	`org_name` text NOT NULL,
	`email` text,
	`report_id` text NOT NULL,
	`begin_at` integer NOT NULL,
	`end_at` integer NOT NULL,
	`policy_published` text NOT NULL,
	`message_count` integer NOT NULL,
	`sources` text NOT NULL,
	`received_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`domain_id`) REFERENCES `domains`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dmarc_reports_unique_idx` ON `dmarc_reports` (`domain_id`,`org_name`,`report_id`);--> statement-breakpoint
CREATE INDEX `dmarc_reports_domain_idx` ON `dmarc_reports` (`domain_id`,`received_at`,`id`);
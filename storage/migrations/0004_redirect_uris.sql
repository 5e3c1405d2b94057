CREATE TABLE `redirect_uris` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`url` text NOT NULL,
	`platform` text NOT NULL,
	`settings` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `redirect_uris_application_idx` ON `redirect_uris` (`application_id`);
CREATE TABLE `attachment_uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`filename` text NOT NULL,
	`content_type` text NOT NULL,
	`expected_size` integer DEFAULT 0 NOT NULL,
	`status` text NOT NULL,
	`token_hash` text NOT NULL,
	`blob_hash` text,
	`size` integer,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `attachment_uploads_grant_idx` ON `attachment_uploads` (`grant_id`);--> statement-breakpoint
CREATE INDEX `attachment_uploads_expiry_idx` ON `attachment_uploads` (`expires_at`);--> statement-breakpoint
CREATE INDEX `attachment_uploads_blob_idx` ON `attachment_uploads` (`blob_hash`);
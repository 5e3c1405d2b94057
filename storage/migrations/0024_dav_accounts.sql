CREATE TABLE `dav_accounts` (
	`grant_id` text PRIMARY KEY NOT NULL,
	`caldav_home` text,
	`caldav_url` text,
	`caldav_username` text,
	`caldav_password_sealed` text,
	`carddav_home` text,
	`carddav_url` text,
	`carddav_username` text,
	`carddav_password_sealed` text,
	`failures` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`retry_at` integer,
	`last_sync_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `dav_collections` (
	`grant_id` text NOT NULL,
	`url` text NOT NULL,
	`kind` text NOT NULL,
	`calendar_id` text,
	`sync_token` text,
	`ctag` text,
	PRIMARY KEY(`grant_id`, `url`),
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dav_collections_calendar_idx` ON `dav_collections` (`calendar_id`);--> statement-breakpoint
CREATE TABLE `dav_objects` (
	`grant_id` text NOT NULL,
	`url` text NOT NULL,
	`collection_url` text NOT NULL,
	`etag` text,
	`local_id` text NOT NULL,
	`uid` text,
	PRIMARY KEY(`grant_id`, `url`),
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dav_objects_local_idx` ON `dav_objects` (`grant_id`,`local_id`);
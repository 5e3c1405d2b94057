CREATE TABLE `imap_accounts` (
	`grant_id` text PRIMARY KEY NOT NULL,
	`imap_host` text NOT NULL,
	`imap_port` integer NOT NULL,
	`imap_username` text NOT NULL,
	`imap_password_sealed` text NOT NULL,
	`imap_secure` integer NOT NULL,
	`smtp_host` text NOT NULL,
	`smtp_port` integer NOT NULL,
	`smtp_username` text,
	`smtp_password_sealed` text,
	`smtp_secure` integer NOT NULL,
	`allow_insecure_tls` integer DEFAULT false NOT NULL,
	`sync_days` integer NOT NULL,
	`server_files_sent` integer,
	`sync_state` text DEFAULT 'initial' NOT NULL,
	`sync_total` integer DEFAULT 0 NOT NULL,
	`sync_done` integer DEFAULT 0 NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`retry_at` integer,
	`last_error` text,
	`last_sync_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `imap_folders` (
	`grant_id` text NOT NULL,
	`path` text NOT NULL,
	`folder_id` text NOT NULL,
	`delimiter` text,
	`special_use` text,
	`uid_validity` text,
	`uid_next` integer,
	`highest_modseq` text,
	`initial_lowest_uid` integer,
	`initial_floor_uid` integer,
	`initial_done` integer DEFAULT false NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`grant_id`, `path`),
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `imap_messages` (
	`grant_id` text NOT NULL,
	`path` text NOT NULL,
	`uid` integer NOT NULL,
	`message_id` text NOT NULL,
	`flags` text DEFAULT '[]' NOT NULL,
	`modseq` text,
	PRIMARY KEY(`grant_id`, `path`, `uid`),
	FOREIGN KEY (`message_id`) REFERENCES `messages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `imap_messages_message_idx` ON `imap_messages` (`message_id`);
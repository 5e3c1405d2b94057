CREATE TABLE `oauth_grant_tokens` (
	`grant_id` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL,
	`refresh_token_sealed` text,
	`access_token_sealed` text NOT NULL,
	`access_expires_at` integer NOT NULL,
	`scope` text NOT NULL,
	`subject` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `oauth_issued_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`application_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`redirect_uri` text,
	`code_challenge` text,
	`code_challenge_method` text,
	`offline` integer DEFAULT false NOT NULL,
	`id_token_sealed` text,
	`scope` text NOT NULL,
	`expires_at` integer,
	`used_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth_issued_tokens_grant_idx` ON `oauth_issued_tokens` (`grant_id`);--> statement-breakpoint
ALTER TABLE `imap_accounts` ADD `auth_method` text DEFAULT 'password' NOT NULL;
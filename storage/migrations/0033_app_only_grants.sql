ALTER TABLE `grants` ADD `credential_id` text;--> statement-breakpoint
ALTER TABLE `oauth_grant_tokens` ADD `kind` text DEFAULT 'refresh_token' NOT NULL;--> statement-breakpoint
ALTER TABLE `oauth_grant_tokens` ADD `tenant` text;
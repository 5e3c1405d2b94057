ALTER TABLE `api_keys` ADD `scope` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `permissions` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `last_used_at` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `created_by` text;
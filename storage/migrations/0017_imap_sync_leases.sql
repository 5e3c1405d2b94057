ALTER TABLE `imap_accounts` ADD `lease_owner` text;--> statement-breakpoint
ALTER TABLE `imap_accounts` ADD `lease_until` integer;
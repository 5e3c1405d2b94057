CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`name` text NOT NULL,
	`prefix` text NOT NULL,
	`key_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_idx` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_application_idx` ON `api_keys` (`application_id`);--> statement-breakpoint
CREATE TABLE `applications` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`plan` text NOT NULL,
	`is_default` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `domains` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`name` text NOT NULL,
	`domain_address` text NOT NULL,
	`branded` integer DEFAULT false NOT NULL,
	`region` text DEFAULT 'us' NOT NULL,
	`verified_ownership` integer DEFAULT false NOT NULL,
	`verified_mx` integer DEFAULT false NOT NULL,
	`verified_spf` integer DEFAULT false NOT NULL,
	`verified_dkim` integer DEFAULT false NOT NULL,
	`verified_feedback` integer DEFAULT false NOT NULL,
	`verified_dmarc` integer DEFAULT false NOT NULL,
	`verified_arc` integer DEFAULT false NOT NULL,
	`verification_token` text NOT NULL,
	`dkim_selector` text,
	`dkim_private_key_pem` text,
	`dkim_public_key` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `domains_address_idx` ON `domains` (`domain_address`);--> statement-breakpoint
CREATE INDEX `domains_application_idx` ON `domains` (`application_id`);--> statement-breakpoint
CREATE TABLE `service_account_nonces` (
	`service_account_id` text NOT NULL,
	`nonce` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`service_account_id`, `nonce`)
);
--> statement-breakpoint
CREATE INDEX `service_account_nonces_expiry_idx` ON `service_account_nonces` (`expires_at`);--> statement-breakpoint
CREATE TABLE `service_accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`public_key_pem` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `service_accounts_application_idx` ON `service_accounts` (`application_id`);--> statement-breakpoint
CREATE TABLE `workspaces` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`name` text NOT NULL,
	`domain` text,
	`auto_group` integer DEFAULT false NOT NULL,
	`is_default` integer DEFAULT false NOT NULL,
	`policy_id` text,
	`rule_ids` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `workspaces_application_idx` ON `workspaces` (`application_id`,`domain`);--> statement-breakpoint
CREATE TABLE `calendars` (
	`id` text PRIMARY KEY NOT NULL,
	`grant_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`location` text,
	`timezone` text DEFAULT 'UTC' NOT NULL,
	`is_primary` integer DEFAULT false NOT NULL,
	`hex_color` text,
	`metadata` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `calendars_grant_idx` ON `calendars` (`grant_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `folders` (
	`id` text NOT NULL,
	`grant_id` text NOT NULL,
	`name` text NOT NULL,
	`system_role` text,
	`parent_id` text,
	`sort_order` integer DEFAULT 1000 NOT NULL,
	`text_color` text,
	`background_color` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`grant_id`, `id`),
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `folders_grant_name_idx` ON `folders` (`grant_id`,`name`);--> statement-breakpoint
CREATE INDEX `folders_grant_order_idx` ON `folders` (`grant_id`,`sort_order`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `grants` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`provider` text NOT NULL,
	`email` text NOT NULL,
	`name` text,
	`grant_status` text DEFAULT 'valid' NOT NULL,
	`workspace_id` text,
	`settings` text DEFAULT '{}' NOT NULL,
	`scope` text DEFAULT '[]' NOT NULL,
	`blocked` integer DEFAULT false NOT NULL,
	`app_password_hash` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `grants_email_idx` ON `grants` (`email`);--> statement-breakpoint
CREATE INDEX `grants_application_idx` ON `grants` (`application_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`payload` text NOT NULL,
	`run_at` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`lease_owner` text,
	`lease_expires_at` integer,
	`last_error` text,
	`dedupe_key` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_dedupe_key_unique` ON `jobs` (`dedupe_key`);--> statement-breakpoint
CREATE INDEX `jobs_due_idx` ON `jobs` (`run_at`);--> statement-breakpoint
CREATE TABLE `outbox_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`application_id` text NOT NULL,
	`grant_id` text,
	`type` text NOT NULL,
	`object_id` text,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL,
	`dispatched_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `outbox_events_id_unique` ON `outbox_events` (`id`);--> statement-breakpoint
CREATE INDEX `outbox_pending_idx` ON `outbox_events` (`dispatched_at`,`seq`);
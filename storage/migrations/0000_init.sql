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
	`state` text,
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
	`created_at` integer NOT NULL,
	`dead_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_dedupe_key_unique` ON `jobs` (`dedupe_key`);--> statement-breakpoint
CREATE INDEX `jobs_due_idx` ON `jobs` (`dead_at`,`run_at`);--> statement-breakpoint
CREATE INDEX `jobs_lease_idx` ON `jobs` (`lease_expires_at`);--> statement-breakpoint
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
CREATE INDEX `outbox_pending_idx` ON `outbox_events` (`dispatched_at`,`seq`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`description` text,
	`trigger_types` text NOT NULL,
	`webhook_url` text NOT NULL,
	`status` text NOT NULL,
	`notification_email_addresses` text DEFAULT '[]' NOT NULL,
	`secret` text NOT NULL,
	`compressed_delivery` integer DEFAULT false NOT NULL,
	`start_seq` integer DEFAULT 0 NOT NULL,
	`consecutive_failures` integer DEFAULT 0 NOT NULL,
	`failing_since` integer,
	`last_error` text,
	`status_updated_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhooks_application_idx` ON `webhooks` (`application_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `attachments` (
	`id` text PRIMARY KEY NOT NULL,
	`message_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`position` integer NOT NULL,
	`filename` text NOT NULL,
	`content_type` text NOT NULL,
	`size` integer NOT NULL,
	`is_inline` integer DEFAULT false NOT NULL,
	`content_id` text,
	`content_disposition` text,
	`blob_hash` text NOT NULL,
	FOREIGN KEY (`message_id`) REFERENCES `messages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `attachments_message_idx` ON `attachments` (`message_id`,`position`);--> statement-breakpoint
CREATE INDEX `attachments_blob_idx` ON `attachments` (`blob_hash`);--> statement-breakpoint
CREATE TABLE `blob_chunks` (
	`hash` text NOT NULL,
	`seq` integer NOT NULL,
	`data` blob NOT NULL,
	PRIMARY KEY(`hash`, `seq`),
	FOREIGN KEY (`hash`) REFERENCES `blobs`(`hash`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `blobs` (
	`hash` text PRIMARY KEY NOT NULL,
	`size` integer NOT NULL,
	`chunk_count` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `message_folders` (
	`message_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`folder_id` text NOT NULL,
	`unread` integer NOT NULL,
	PRIMARY KEY(`message_id`, `folder_id`),
	FOREIGN KEY (`message_id`) REFERENCES `messages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `message_folders_count_idx` ON `message_folders` (`grant_id`,`folder_id`,`unread`);--> statement-breakpoint
CREATE TABLE `messages` (
	`id` text PRIMARY KEY NOT NULL,
	`grant_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`seq` integer NOT NULL,
	`date` integer NOT NULL,
	`sent_at` integer,
	`subject` text DEFAULT '' NOT NULL,
	`from_addresses` text DEFAULT '[]' NOT NULL,
	`to_addresses` text DEFAULT '[]' NOT NULL,
	`cc_addresses` text DEFAULT '[]' NOT NULL,
	`bcc_addresses` text DEFAULT '[]' NOT NULL,
	`reply_to_addresses` text DEFAULT '[]' NOT NULL,
	`snippet` text DEFAULT '' NOT NULL,
	`body` text,
	`body_hash` text,
	`folders` text DEFAULT '[]' NOT NULL,
	`unread` integer DEFAULT true NOT NULL,
	`starred` integer DEFAULT false NOT NULL,
	`has_attachments` integer DEFAULT false NOT NULL,
	`header_message_id` text,
	`in_reply_to` text,
	`references` text DEFAULT '[]' NOT NULL,
	`raw_hash` text NOT NULL,
	`raw_size` integer NOT NULL,
	`envelope_from` text,
	`envelope_to` text,
	`parse_error` text,
	`metadata` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_seq_idx` ON `messages` (`seq`);--> statement-breakpoint
CREATE INDEX `messages_grant_order_idx` ON `messages` (`grant_id`,`date`,`seq`);--> statement-breakpoint
CREATE INDEX `messages_thread_idx` ON `messages` (`thread_id`,`date`);--> statement-breakpoint
CREATE INDEX `messages_raw_hash_idx` ON `messages` (`raw_hash`);--> statement-breakpoint
CREATE INDEX `messages_body_hash_idx` ON `messages` (`body_hash`);--> statement-breakpoint
CREATE TABLE `thread_references` (
	`grant_id` text NOT NULL,
	`header_id` text NOT NULL,
	`thread_id` text NOT NULL,
	PRIMARY KEY(`grant_id`, `header_id`, `thread_id`),
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `thread_references_thread_idx` ON `thread_references` (`thread_id`);--> statement-breakpoint
CREATE TABLE `threads` (
	`id` text PRIMARY KEY NOT NULL,
	`grant_id` text NOT NULL,
	`subject` text DEFAULT '' NOT NULL,
	`snippet` text DEFAULT '' NOT NULL,
	`participants` text DEFAULT '[]' NOT NULL,
	`message_count` integer DEFAULT 0 NOT NULL,
	`earliest_message_date` integer NOT NULL,
	`latest_message_date` integer NOT NULL,
	`latest_seq` integer NOT NULL,
	`latest_message_id` text NOT NULL,
	`latest_message_received_date` integer,
	`latest_message_sent_date` integer,
	`has_attachments` integer DEFAULT false NOT NULL,
	`unread` integer DEFAULT false NOT NULL,
	`starred` integer DEFAULT false NOT NULL,
	`folders` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `threads_grant_order_idx` ON `threads` (`grant_id`,`latest_message_date`,`latest_seq`);--> statement-breakpoint
CREATE TABLE `contacts` (
	`id` text PRIMARY KEY NOT NULL,
	`grant_id` text NOT NULL,
	`display_name` text,
	`given_name` text,
	`middle_name` text,
	`surname` text,
	`suffix` text,
	`nickname` text,
	`birthday` text,
	`company_name` text,
	`job_title` text,
	`manager_name` text,
	`office_location` text,
	`notes` text,
	`picture_url` text,
	`picture` text,
	`source` text DEFAULT 'address_book' NOT NULL,
	`primary_email` text,
	`emails` text DEFAULT '[]' NOT NULL,
	`phone_numbers` text DEFAULT '[]' NOT NULL,
	`physical_addresses` text DEFAULT '[]' NOT NULL,
	`web_pages` text DEFAULT '[]' NOT NULL,
	`im_addresses` text DEFAULT '[]' NOT NULL,
	`groups` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `contacts_grant_order_idx` ON `contacts` (`grant_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `contacts_grant_email_idx` ON `contacts` (`grant_id`,`primary_email`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`grant_id` text NOT NULL,
	`calendar_id` text NOT NULL,
	`ical_uid` text NOT NULL,
	`sequence` integer DEFAULT 0 NOT NULL,
	`master_event_id` text,
	`original_start_time` integer,
	`title` text,
	`description` text,
	`location` text,
	`when_type` text NOT NULL,
	`start_time` integer,
	`end_time` integer,
	`start_timezone` text,
	`end_timezone` text,
	`start_date` text,
	`end_date` text,
	`range_start` integer NOT NULL,
	`range_end` integer NOT NULL,
	`recurrence` text,
	`busy` integer DEFAULT true NOT NULL,
	`status` text DEFAULT 'confirmed' NOT NULL,
	`visibility` text DEFAULT 'default' NOT NULL,
	`read_only` integer DEFAULT false NOT NULL,
	`hide_participants` integer DEFAULT false NOT NULL,
	`capacity` integer,
	`organizer` text,
	`creator` text,
	`participants` text DEFAULT '[]' NOT NULL,
	`resources` text,
	`conferencing` text,
	`reminders` text,
	`metadata` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`calendar_id`) REFERENCES `calendars`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `events_calendar_range_idx` ON `events` (`calendar_id`,`range_start`,`id`);--> statement-breakpoint
CREATE INDEX `events_calendar_range_end_idx` ON `events` (`calendar_id`,`range_end`,`range_start`);--> statement-breakpoint
CREATE INDEX `events_series_range_idx` ON `events` (`calendar_id`,`range_end`) WHERE "events"."recurrence" is not null;--> statement-breakpoint
CREATE INDEX `events_single_busy_idx` ON `events` (`calendar_id`,`range_end`,`range_start`,`busy`,`status`,`when_type`,`start_time`,`end_time`,`start_date`,`end_date`,("participants" glob '*"no"*')) WHERE "events"."recurrence" is null;--> statement-breakpoint
CREATE INDEX `events_grant_range_idx` ON `events` (`grant_id`,`range_start`,`range_end`);--> statement-breakpoint
CREATE INDEX `events_grant_uid_idx` ON `events` (`grant_id`,`ical_uid`);--> statement-breakpoint
CREATE INDEX `events_master_idx` ON `events` (`master_event_id`,`original_start_time`);--> statement-breakpoint
CREATE TABLE `draft_details` (
	`id` text PRIMARY KEY NOT NULL,
	`message_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`header_message_id` text NOT NULL,
	`reply_to_message_id` text,
	`is_plaintext` integer DEFAULT false NOT NULL,
	`plain_body` text,
	`tracking_options` text,
	`custom_headers` text,
	`send_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`message_id`) REFERENCES `messages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `draft_details_message_idx` ON `draft_details` (`message_id`);--> statement-breakpoint
CREATE INDEX `draft_details_grant_idx` ON `draft_details` (`grant_id`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`application_id` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`status` integer NOT NULL,
	`response` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`application_id`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_expiry_idx` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
CREATE TABLE `outbound_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text,
	`grant_id` text,
	`message_id` text,
	`kind` text NOT NULL,
	`header_message_id` text NOT NULL,
	`subject` text DEFAULT '' NOT NULL,
	`envelope_from` text NOT NULL,
	`raw_hash` text NOT NULL,
	`pending_raw_hash` text,
	`raw_size` integer NOT NULL,
	`tracking_options` text,
	`accepted_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `outbound_messages_message_idx` ON `outbound_messages` (`message_id`);--> statement-breakpoint
CREATE INDEX `outbound_messages_pending_idx` ON `outbound_messages` (`pending_raw_hash`);--> statement-breakpoint
CREATE TABLE `outbound_recipients` (
	`outbound_id` text NOT NULL,
	`email` text NOT NULL,
	`domain` text NOT NULL,
	`route` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_code` integer,
	`last_response` text,
	`next_attempt_at` integer,
	`updated_at` integer NOT NULL,
	`final_at` integer,
	PRIMARY KEY(`outbound_id`, `email`),
	FOREIGN KEY (`outbound_id`) REFERENCES `outbound_messages`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `outbound_recipients_domain_idx` ON `outbound_recipients` (`outbound_id`,`domain`,`status`);--> statement-breakpoint
CREATE TABLE `scheduled_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`draft_id` text NOT NULL,
	`keep_draft` integer DEFAULT false NOT NULL,
	`send_at` integer NOT NULL,
	`status` text NOT NULL,
	`sent_message_id` text,
	`error` text,
	`close_time` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `scheduled_messages_grant_idx` ON `scheduled_messages` (`grant_id`,`send_at`);--> statement-breakpoint
CREATE INDEX `scheduled_messages_draft_idx` ON `scheduled_messages` (`draft_id`);
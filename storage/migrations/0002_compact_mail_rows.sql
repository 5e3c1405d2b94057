CREATE TABLE `message_raw` (
	`seq` integer PRIMARY KEY NOT NULL,
	`data` blob NOT NULL,
	FOREIGN KEY (`seq`) REFERENCES `messages`(`seq`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_messages` (
	`id` text NOT NULL,
	`grant_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`seq` integer PRIMARY KEY NOT NULL,
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
	`raw_hash` text,
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
INSERT INTO `__new_messages`("id", "grant_id", "thread_id", "seq", "date", "sent_at", "subject", "from_addresses", "to_addresses", "cc_addresses", "bcc_addresses", "reply_to_addresses", "snippet", "body", "body_hash", "folders", "unread", "starred", "has_attachments", "header_message_id", "in_reply_to", "references", "raw_hash", "raw_size", "envelope_from", "envelope_to", "parse_error", "metadata", "created_at", "updated_at") SELECT "id", "grant_id", "thread_id", "seq", "date", "sent_at", "subject", "from_addresses", "to_addresses", "cc_addresses", "bcc_addresses", "reply_to_addresses", "snippet", "body", "body_hash", "folders", "unread", "starred", "has_attachments", "header_message_id", "in_reply_to", "references", "raw_hash", "raw_size", "envelope_from", "envelope_to", "parse_error", "metadata", "created_at", "updated_at" FROM `messages`;--> statement-breakpoint
DROP TABLE `messages`;--> statement-breakpoint
ALTER TABLE `__new_messages` RENAME TO `messages`;--> statement-breakpoint
-- Hand-written (drizzle-kit has no WITHOUT ROWID): threads, thread references and folder links are clustered on
-- their primary key, one B-tree each instead of a rowid table and its primary-key index. A drizzle-kit
-- migration that rebuilds one of them must keep WITHOUT ROWID.
CREATE TABLE `__new_threads` (
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
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_threads`("id", "grant_id", "subject", "snippet", "participants", "message_count", "earliest_message_date", "latest_message_date", "latest_seq", "latest_message_id", "latest_message_received_date", "latest_message_sent_date", "has_attachments", "unread", "starred", "folders", "created_at", "updated_at") SELECT "id", "grant_id", "subject", "snippet", "participants", "message_count", "earliest_message_date", "latest_message_date", "latest_seq", "latest_message_id", "latest_message_received_date", "latest_message_sent_date", "has_attachments", "unread", "starred", "folders", "created_at", "updated_at" FROM `threads`;
--> statement-breakpoint
DROP TABLE `threads`;
--> statement-breakpoint
ALTER TABLE `__new_threads` RENAME TO `threads`;
--> statement-breakpoint
CREATE INDEX `threads_grant_order_idx` ON `threads` (`grant_id`,`latest_message_date`,`latest_seq`);
--> statement-breakpoint
CREATE TABLE `__new_thread_references` (
	`grant_id` text NOT NULL,
	`header_id` text NOT NULL,
	`thread_id` text NOT NULL,
	PRIMARY KEY(`grant_id`, `header_id`, `thread_id`),
	FOREIGN KEY (`thread_id`) REFERENCES `threads`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_thread_references`("grant_id", "header_id", "thread_id") SELECT "grant_id", "header_id", "thread_id" FROM `thread_references`;
--> statement-breakpoint
DROP TABLE `thread_references`;
--> statement-breakpoint
ALTER TABLE `__new_thread_references` RENAME TO `thread_references`;
--> statement-breakpoint
CREATE INDEX `thread_references_thread_idx` ON `thread_references` (`thread_id`);
--> statement-breakpoint
CREATE TABLE `__new_message_folders` (
	`message_id` text NOT NULL,
	`grant_id` text NOT NULL,
	`folder_id` text NOT NULL,
	`unread` integer NOT NULL,
	PRIMARY KEY(`message_id`, `folder_id`),
	FOREIGN KEY (`message_id`) REFERENCES `messages`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_message_folders`("message_id", "grant_id", "folder_id", "unread") SELECT "message_id", "grant_id", "folder_id", "unread" FROM `message_folders`;
--> statement-breakpoint
DROP TABLE `message_folders`;
--> statement-breakpoint
ALTER TABLE `__new_message_folders` RENAME TO `message_folders`;
--> statement-breakpoint
CREATE INDEX `message_folders_count_idx` ON `message_folders` (`grant_id`,`folder_id`,`unread`);--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `messages_id_unique` ON `messages` (`id`);--> statement-breakpoint
CREATE INDEX `messages_grant_order_idx` ON `messages` (`grant_id`,`date`,`seq`);--> statement-breakpoint
CREATE INDEX `messages_thread_idx` ON `messages` (`thread_id`,`date`);--> statement-breakpoint
CREATE INDEX `messages_raw_hash_idx` ON `messages` (`raw_hash`) WHERE "messages"."raw_hash" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `messages_body_hash_idx` ON `messages` (`body_hash`) WHERE "messages"."body_hash" IS NOT NULL;
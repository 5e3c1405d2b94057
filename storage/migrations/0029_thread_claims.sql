CREATE TABLE `thread_claims` (
	`grant_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`application_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`key_id` text,
	`key_name` text NOT NULL,
	`session` text,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`grant_id`, `thread_id`)
);

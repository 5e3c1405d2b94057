CREATE TABLE `connector_credentials` (
	`id` text PRIMARY KEY NOT NULL,
	`application_id` text NOT NULL,
	`provider` text NOT NULL,
	`name` text NOT NULL,
	`credential_type` text NOT NULL,
	`data_sealed` text NOT NULL,
	`hashed_data` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`application_id`,`provider`) REFERENCES `connectors`(`application_id`,`provider`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `connector_credentials_name_idx` ON `connector_credentials` (`application_id`,`provider`,`name`);--> statement-breakpoint
CREATE INDEX `connector_credentials_created_idx` ON `connector_credentials` (`application_id`,`provider`,`created_at`);--> statement-breakpoint
CREATE TABLE `connectors` (
	`application_id` text NOT NULL,
	`provider` text NOT NULL,
	`name` text NOT NULL,
	`client_id` text,
	`client_secret_sealed` text,
	`scope` text NOT NULL,
	`settings` text NOT NULL,
	`active_credential_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`application_id`, `provider`),
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade
);

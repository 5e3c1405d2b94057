CREATE TABLE `invitation_outcomes` (
	`message_id` text PRIMARY KEY NOT NULL,
	`grant_id` text NOT NULL,
	`status` text NOT NULL,
	`detail` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `invitation_outcomes_grant_idx` ON `invitation_outcomes` (`grant_id`);
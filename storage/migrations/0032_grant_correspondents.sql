CREATE TABLE `grant_correspondents` (
	`grant_id` text NOT NULL,
	`email` text NOT NULL,
	`first_at` integer NOT NULL,
	PRIMARY KEY(`grant_id`, `email`),
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `grant_correspondents_first_idx` ON `grant_correspondents` (`grant_id`,`first_at`);--> statement-breakpoint
DROP INDEX `outbound_recipients_email_idx`;--> statement-breakpoint
INSERT OR IGNORE INTO `grant_correspondents` (`grant_id`, `email`, `first_at`)
SELECT m.`grant_id`, r.`email`, MIN(m.`accepted_at`) FROM `outbound_recipients` r
JOIN `outbound_messages` m ON m.`id` = r.`outbound_id`
JOIN `grants` g ON g.`id` = m.`grant_id`
GROUP BY m.`grant_id`, r.`email`;

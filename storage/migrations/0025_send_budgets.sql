CREATE INDEX `outbound_messages_grant_idx` ON `outbound_messages` (`grant_id`,`accepted_at`);--> statement-breakpoint
CREATE INDEX `outbound_recipients_email_idx` ON `outbound_recipients` (`email`);
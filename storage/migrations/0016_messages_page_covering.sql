DROP INDEX `messages_grant_order_idx`;--> statement-breakpoint
CREATE INDEX `messages_grant_order_idx` ON `messages` (`grant_id`,`date`,`seq`,`id`,`rev`);
DROP INDEX `messages_body_hash_idx`;--> statement-breakpoint
CREATE INDEX `messages_body_hash_idx` ON `messages` (`body_hash`) WHERE "messages"."body_hash" IS NOT NULL;
ALTER TABLE `messages` ADD `rev` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE TRIGGER `messages_rev_on_update` AFTER UPDATE ON `messages` FOR EACH ROW WHEN NEW.`rev` = OLD.`rev` BEGIN UPDATE `messages` SET `rev` = OLD.`rev` + 1 WHERE `seq` = NEW.`seq`; END;
--> statement-breakpoint
CREATE TRIGGER `messages_rev_on_attachment_insert` AFTER INSERT ON `attachments` FOR EACH ROW BEGIN UPDATE `messages` SET `rev` = `rev` + 1 WHERE `id` = NEW.`message_id`; END;
--> statement-breakpoint
CREATE TRIGGER `messages_rev_on_attachment_update` AFTER UPDATE ON `attachments` FOR EACH ROW BEGIN UPDATE `messages` SET `rev` = `rev` + 1 WHERE `id` IN (OLD.`message_id`, NEW.`message_id`); END;
--> statement-breakpoint
CREATE TRIGGER `messages_rev_on_attachment_delete` AFTER DELETE ON `attachments` FOR EACH ROW BEGIN UPDATE `messages` SET `rev` = `rev` + 1 WHERE `id` = OLD.`message_id`; END;

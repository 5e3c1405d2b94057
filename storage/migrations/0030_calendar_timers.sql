CREATE TABLE `calendar_timer_firings` (
	`event_id` text NOT NULL,
	`kind` text NOT NULL,
	`occurs_at` integer NOT NULL,
	`fired_at` integer NOT NULL,
	PRIMARY KEY(`event_id`, `kind`, `occurs_at`),
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `calendar_timer_firings_occurs_idx` ON `calendar_timer_firings` (`occurs_at`);--> statement-breakpoint
CREATE TABLE `calendar_timer_marks` (
	`scope` text PRIMARY KEY NOT NULL,
	`ran_until` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `calendars` ADD `notify_before_start_minutes` integer;--> statement-breakpoint
ALTER TABLE `calendars` ADD `event_timers` integer DEFAULT true NOT NULL;--> statement-breakpoint
CREATE INDEX `calendars_notify_before_idx` ON `calendars` (`notify_before_start_minutes`);--> statement-breakpoint
CREATE INDEX `events_timer_start_idx` ON `events` (`start_time`) WHERE "events"."recurrence" is null and "events"."when_type" in ('time', 'timespan');--> statement-breakpoint
CREATE INDEX `events_timer_end_idx` ON `events` (`end_time`) WHERE "events"."recurrence" is null and "events"."when_type" in ('time', 'timespan');--> statement-breakpoint
CREATE INDEX `events_timer_series_idx` ON `events` (`range_end`,`range_start`) WHERE "events"."recurrence" is not null and "events"."when_type" in ('time', 'timespan');
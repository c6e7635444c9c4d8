CREATE TABLE `live_alert_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`alert_id` text NOT NULL,
	`stream_id` text NOT NULL,
	`t` real NOT NULL,
	`last_t` real NOT NULL,
	`frame` text,
	`evidence` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`alert_id`) REFERENCES `live_alerts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`stream_id`) REFERENCES `live_streams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `live_alert_events_uq` ON `live_alert_events` (`alert_id`,`stream_id`,`t`);--> statement-breakpoint
CREATE TABLE `live_alerts` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`index_id` text NOT NULL,
	`stream_id` text,
	`kind` text NOT NULL,
	`query` text NOT NULL,
	`min_count` integer DEFAULT 1 NOT NULL,
	`colour` text,
	`person` text,
	`cooldown_sec` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`index_id`) REFERENCES `media_indexes`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`stream_id`) REFERENCES `live_streams`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `live_alerts_index_idx` ON `live_alerts` (`index_id`);--> statement-breakpoint
CREATE TABLE `live_streams` (
	`id` text PRIMARY KEY NOT NULL,
	`video_id` text NOT NULL,
	`index_id` text NOT NULL,
	`user_id` text NOT NULL,
	`url` text,
	`name` text NOT NULL,
	`fps` real NOT NULL,
	`retention_sec` integer NOT NULL,
	`state` text NOT NULL,
	`reason` text,
	`origin_ms` integer,
	`went_live_at` integer,
	`frames_analysed` integer DEFAULT 0 NOT NULL,
	`seconds_analysed` real DEFAULT 0 NOT NULL,
	`frames_dropped` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`video_id`) REFERENCES `videos`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`index_id`) REFERENCES `media_indexes`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `live_streams_user_idx` ON `live_streams` (`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `live_streams_video_uq` ON `live_streams` (`video_id`);--> statement-breakpoint
ALTER TABLE `webhook_events` ADD `data` text;
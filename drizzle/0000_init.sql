CREATE TABLE `credit_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL,
	`delta` integer NOT NULL,
	`reason` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `credit_events_user_idx` ON `credit_events` (`user_id`);--> statement-breakpoint
CREATE TABLE `media_indexes` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `media_indexes_user_name_live_uq` ON `media_indexes` (`user_id`,`name`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `media_indexes_user_idx` ON `media_indexes` (`user_id`);--> statement-breakpoint
CREATE TABLE `tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`hash` text NOT NULL,
	`prefix` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tokens_hash_uq` ON `tokens` (`hash`);--> statement-breakpoint
CREATE INDEX `tokens_user_idx` ON `tokens` (`user_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`credits` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `videos` (
	`id` text PRIMARY KEY NOT NULL,
	`index_id` text NOT NULL,
	`user_id` text NOT NULL,
	`source_url` text NOT NULL,
	`file_name` text NOT NULL,
	`file_type` text,
	`storage_path` text,
	`size_bytes` integer,
	`sha256` text,
	`duration_sec` real,
	`fps` real,
	`width` integer,
	`height` integer,
	`video_codec` text,
	`has_audio` integer,
	`status` text NOT NULL,
	`stage` text,
	`progress` real DEFAULT 0 NOT NULL,
	`error` text,
	`uploaded_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`index_id`) REFERENCES `media_indexes`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `videos_index_idx` ON `videos` (`index_id`);--> statement-breakpoint
CREATE INDEX `videos_index_sha_idx` ON `videos` (`index_id`,`sha256`);--> statement-breakpoint
CREATE INDEX `videos_status_idx` ON `videos` (`status`);
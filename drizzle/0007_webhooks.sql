CREATE TABLE `index_webhooks` (
	`index_id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`index_id`) REFERENCES `media_indexes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `webhook_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL,
	`index_id` text NOT NULL,
	`video_id` text NOT NULL,
	`event` text NOT NULL,
	`file_name` text NOT NULL,
	`status` text NOT NULL,
	`error` text,
	`url` text NOT NULL,
	`created_at` integer NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`last_error` text,
	`delivered_at` integer
);
--> statement-breakpoint
CREATE INDEX `webhook_events_state_idx` ON `webhook_events` (`state`,`video_id`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_secrets` (
	`user_id` text PRIMARY KEY NOT NULL,
	`secret` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `webhook_settings` (
	`id` integer PRIMARY KEY NOT NULL,
	`default_url` text
);

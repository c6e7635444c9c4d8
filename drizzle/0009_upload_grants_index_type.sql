CREATE TABLE `upload_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`index_ref` text NOT NULL,
	`file_name` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `upload_grants_expires_idx` ON `upload_grants` (`expires_at`);--> statement-breakpoint
ALTER TABLE `media_indexes` ADD `type` text DEFAULT 'standard' NOT NULL;
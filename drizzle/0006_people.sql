CREATE TABLE `people` (
	`id` text PRIMARY KEY NOT NULL,
	`index_id` text NOT NULL,
	`user_id` text NOT NULL,
	`name` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`index_id`) REFERENCES `media_indexes`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `people_index_idx` ON `people` (`index_id`);--> statement-breakpoint
CREATE TABLE `person_appearances` (
	`segment_id` integer PRIMARY KEY NOT NULL,
	`person_id` text NOT NULL,
	`video_id` text NOT NULL,
	`index_id` text NOT NULL,
	`descriptor` blob NOT NULL,
	FOREIGN KEY (`segment_id`) REFERENCES `segments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`person_id`) REFERENCES `people`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`video_id`) REFERENCES `videos`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`index_id`) REFERENCES `media_indexes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `person_appearances_person_idx` ON `person_appearances` (`person_id`);--> statement-breakpoint
CREATE INDEX `person_appearances_index_idx` ON `person_appearances` (`index_id`);--> statement-breakpoint
CREATE INDEX `person_appearances_video_idx` ON `person_appearances` (`video_id`);
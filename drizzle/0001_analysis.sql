CREATE TABLE `frames` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`video_id` text NOT NULL,
	`t` real NOT NULL,
	`shot` integer NOT NULL,
	`file` text NOT NULL,
	FOREIGN KEY (`video_id`) REFERENCES `videos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `frames_video_t_idx` ON `frames` (`video_id`,`t`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`video_id` text PRIMARY KEY NOT NULL,
	`state` text NOT NULL,
	`stage` text NOT NULL,
	`progress` real DEFAULT 0 NOT NULL,
	`eta_sec` real,
	`attempts` integer DEFAULT 0 NOT NULL,
	`worker_id` text,
	`error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`video_id`) REFERENCES `videos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `jobs_state_idx` ON `jobs` (`state`,`created_at`);--> statement-breakpoint
CREATE TABLE `segments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`video_id` text NOT NULL,
	`kind` text NOT NULL,
	`start` real NOT NULL,
	`end` real NOT NULL,
	`text` text NOT NULL,
	`confidence` real,
	`extra` text,
	`embedding` blob,
	FOREIGN KEY (`video_id`) REFERENCES `videos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `segments_video_kind_idx` ON `segments` (`video_id`,`kind`,`start`);
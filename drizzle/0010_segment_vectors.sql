CREATE TABLE `segment_vectors` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`video_id` text NOT NULL,
	`vector` blob NOT NULL,
	FOREIGN KEY (`video_id`) REFERENCES `videos`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `segment_vectors_video_idx` ON `segment_vectors` (`video_id`,`id`);--> statement-breakpoint
ALTER TABLE `segments` ADD `vector_id` integer;--> statement-breakpoint
CREATE INDEX `segments_vector_idx` ON `segments` (`vector_id`);--> statement-breakpoint
CREATE INDEX `segments_legacy_embedding_idx` ON `segments` (`id`) WHERE "segments"."embedding" IS NOT NULL;
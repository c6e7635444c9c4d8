DROP INDEX `segments_video_kind_text_idx`;--> statement-breakpoint
CREATE INDEX `segments_video_kind_text_end_idx` ON `segments` (`video_id`,`kind`,`text`,`start`,`end`);
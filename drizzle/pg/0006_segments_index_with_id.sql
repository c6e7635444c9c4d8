DROP INDEX "segments_video_kind_idx";--> statement-breakpoint
CREATE INDEX "segments_video_kind_idx" ON "segments" USING btree ("video_id","kind","start","id");
-- The webhook outbox triggers (src/webhooks/service.ts describes the outbox). They were created at
-- start-up with CREATE TRIGGER IF NOT EXISTS before this migration, so a database made by an older
-- version may hold them already: each is dropped and created again, and a changed trigger ships as
-- a new migration that does the same.
-- An event is recorded only when someone listens (the index's URL, else the server's --webhook-url
-- from webhook_settings), and a removal only for a stored video (an upload that failed before
-- storing its file was never announced). Retries stop when their index's URL is removed or
-- changed, or the index is deleted (issue 25): the old receiver is no longer the user's.
DROP TRIGGER IF EXISTS `webhook_video_status`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `webhook_url_removed`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `webhook_url_changed`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `webhook_index_deleted`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `webhook_index_purged`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `webhook_video_removed`;
--> statement-breakpoint
CREATE TRIGGER webhook_video_status AFTER UPDATE OF status ON videos
WHEN NEW.status IN ('ready', 'failed') AND OLD.status IS NOT NEW.status AND COALESCE((SELECT url FROM index_webhooks WHERE index_id = NEW.index_id), (SELECT default_url FROM webhook_settings WHERE id = 1)) IS NOT NULL
BEGIN
  INSERT INTO webhook_events (user_id, index_id, video_id, event, file_name, status, error, url, created_at, next_attempt_at)
  VALUES (NEW.user_id, NEW.index_id, NEW.id, 'video.' || NEW.status, NEW.file_name, NEW.status, NEW.error, COALESCE((SELECT url FROM index_webhooks WHERE index_id = NEW.index_id), (SELECT default_url FROM webhook_settings WHERE id = 1)), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
--> statement-breakpoint
CREATE TRIGGER webhook_url_removed AFTER DELETE ON index_webhooks
BEGIN
  UPDATE webhook_events SET state = 'failed', last_error = 'stopped: the index''s webhook URL was removed'
  WHERE index_id = OLD.index_id AND url = OLD.url AND state = 'pending';
END;
--> statement-breakpoint
CREATE TRIGGER webhook_url_changed AFTER UPDATE OF url ON index_webhooks
WHEN OLD.url IS NOT NEW.url
BEGIN
  UPDATE webhook_events SET state = 'failed', last_error = 'stopped: the index''s webhook URL was changed'
  WHERE index_id = OLD.index_id AND url = OLD.url AND state = 'pending';
END;
--> statement-breakpoint
CREATE TRIGGER webhook_index_deleted AFTER UPDATE OF deleted_at ON media_indexes
WHEN NEW.deleted_at IS NOT NULL
BEGIN
  UPDATE webhook_events SET state = 'failed', last_error = 'stopped: the index was deleted'
  WHERE index_id = NEW.id AND state = 'pending';
END;
--> statement-breakpoint
CREATE TRIGGER webhook_index_purged AFTER DELETE ON media_indexes
BEGIN
  UPDATE webhook_events SET state = 'failed', last_error = 'stopped: the index was deleted'
  WHERE index_id = OLD.id AND state = 'pending';
END;
--> statement-breakpoint
CREATE TRIGGER webhook_video_removed AFTER DELETE ON videos
WHEN OLD.storage_path IS NOT NULL AND COALESCE((SELECT url FROM index_webhooks WHERE index_id = OLD.index_id), (SELECT default_url FROM webhook_settings WHERE id = 1)) IS NOT NULL
BEGIN
  INSERT INTO webhook_events (user_id, index_id, video_id, event, file_name, status, error, url, created_at, next_attempt_at)
  VALUES (OLD.user_id, OLD.index_id, OLD.id, 'video.removed', OLD.file_name, 'removed', NULL, COALESCE((SELECT url FROM index_webhooks WHERE index_id = OLD.index_id), (SELECT default_url FROM webhook_settings WHERE id = 1)), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;

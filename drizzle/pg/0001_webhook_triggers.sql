-- The webhook outbox triggers, as SQLite's (drizzle/0012_webhook_triggers.sql says what each does):
-- an event is recorded in the same transaction as the change it reports, only when someone listens
-- (the index's URL, else the server's --webhook-url from webhook_settings); retries stop when the
-- index's URL is removed or changed, or the index is deleted.
CREATE FUNCTION webhook_target(p_index_id text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT COALESCE((SELECT url FROM index_webhooks WHERE index_id = p_index_id), (SELECT default_url FROM webhook_settings WHERE id = 1))
$$;
--> statement-breakpoint
CREATE FUNCTION webhook_video_status() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE target text := webhook_target(NEW.index_id);
BEGIN
  IF NEW.status IN ('ready', 'failed') AND OLD.status IS DISTINCT FROM NEW.status AND target IS NOT NULL THEN
    INSERT INTO webhook_events (user_id, index_id, video_id, event, file_name, status, error, url, created_at, next_attempt_at)
    VALUES (NEW.user_id, NEW.index_id, NEW.id, 'video.' || NEW.status, NEW.file_name, NEW.status, NEW.error, target, clock_timestamp(), clock_timestamp());
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_video_status AFTER UPDATE OF status ON videos FOR EACH ROW EXECUTE FUNCTION webhook_video_status();
--> statement-breakpoint
CREATE FUNCTION webhook_video_removed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE target text;
BEGIN
  IF OLD.storage_path IS NOT NULL THEN
    target := webhook_target(OLD.index_id);
    IF target IS NOT NULL THEN
      INSERT INTO webhook_events (user_id, index_id, video_id, event, file_name, status, error, url, created_at, next_attempt_at)
      VALUES (OLD.user_id, OLD.index_id, OLD.id, 'video.removed', OLD.file_name, 'removed', NULL, target, clock_timestamp(), clock_timestamp());
    END IF;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_video_removed AFTER DELETE ON videos FOR EACH ROW EXECUTE FUNCTION webhook_video_removed();
--> statement-breakpoint
CREATE FUNCTION webhook_url_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE webhook_events SET state = 'failed', last_error = 'stopped: the index''s webhook URL was removed'
    WHERE index_id = OLD.index_id AND url = OLD.url AND state = 'pending';
  ELSIF OLD.url IS DISTINCT FROM NEW.url THEN
    UPDATE webhook_events SET state = 'failed', last_error = 'stopped: the index''s webhook URL was changed'
    WHERE index_id = OLD.index_id AND url = OLD.url AND state = 'pending';
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_url_removed AFTER DELETE ON index_webhooks FOR EACH ROW EXECUTE FUNCTION webhook_url_gone();
--> statement-breakpoint
CREATE TRIGGER webhook_url_changed AFTER UPDATE OF url ON index_webhooks FOR EACH ROW EXECUTE FUNCTION webhook_url_gone();
--> statement-breakpoint
CREATE FUNCTION webhook_index_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR NEW.deleted_at IS NOT NULL THEN
    UPDATE webhook_events SET state = 'failed', last_error = 'stopped: the index was deleted'
    WHERE index_id = OLD.id AND state = 'pending';
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_index_deleted AFTER UPDATE OF deleted_at ON media_indexes FOR EACH ROW EXECUTE FUNCTION webhook_index_gone();
--> statement-breakpoint
CREATE TRIGGER webhook_index_purged AFTER DELETE ON media_indexes FOR EACH ROW EXECUTE FUNCTION webhook_index_gone();

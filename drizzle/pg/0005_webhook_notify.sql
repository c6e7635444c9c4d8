-- A new outbox row wakes the nodes that hand events to pg-boss (src/webhooks/pg-dispatch.ts).
-- NOTIFY is sent at commit and never after a rollback; one per statement is enough (the payload
-- carries nothing: a woken node reads what waits).
CREATE FUNCTION webhook_event_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('vidq_webhook_events', '');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_event_added AFTER INSERT ON webhook_events FOR EACH STATEMENT EXECUTE FUNCTION webhook_event_added();

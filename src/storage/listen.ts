/**
 * LISTEN on one PostgreSQL channel, on a connection of its own (a pooled connection cannot hold a
 * LISTEN), made again after a loss. A notice is only a wake-up: the listener reads what waits in the
 * tables, so `onNotice` also runs after a reconnect (notices sent while it was down are lost).
 */
import { Client } from 'pg';

export interface ChannelListener {
  close(): Promise<void>;
}

/** Connects and LISTENs (rejects when the first connection fails). */
export async function listenChannel(
  url: string,
  channel: string,
  onNotice: () => void,
  onError?: (e: Error) => void,
): Promise<ChannelListener> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  let client: Client | null = null;
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let backoff = 500;

  const connect = async (): Promise<Client> => {
    const c = new Client({ connectionString: url, application_name: `vidq-listen-${channel}` });
    c.on('notification', (msg) => {
      if (msg.channel === channel) onNotice();
    });
    c.on('error', (e) => lost(c, e));
    c.on('end', () => lost(c, new Error('the connection ended')));
    await c.connect();
    await c.query(`LISTEN ${channel}`);
    return c;
  };

  const lost = (c: Client, e: Error) => {
    if (closed || client !== c) return;
    client = null;
    onError?.(e);
    c.end().catch(() => {});
    const again = () => {
      retry = null;
      if (closed) return;
      connect().then(
        (fresh) => {
          if (closed) return void fresh.end().catch(() => {});
          client = fresh;
          backoff = 500;
          onNotice();
        },
        (err: Error) => {
          onError?.(err);
          backoff = Math.min(backoff * 2, 10_000);
          retry = setTimeout(again, backoff);
        },
      );
    };
    retry = setTimeout(again, backoff);
  };

  client = await connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}

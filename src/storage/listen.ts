/**
 * LISTEN on one PostgreSQL channel, on a connection of its own (a pooled connection cannot hold a
 * LISTEN), made again after a loss with a doubling wait. Notices sent while it was down are lost:
 * `onReconnect` tells the caller to read what waits in the tables (or drop what it cached).
 */
import { Client } from 'pg';

export interface ChannelListener {
  /** The live connection (null while it is made again): a node may NOTIFY on it too. */
  readonly client: Client | null;
  close(): Promise<void>;
}

export interface ListenHandlers {
  onNotice: (payload: string | undefined) => void;
  onReconnect?: () => void;
  onError?: (e: Error) => void;
}

/** Connects and LISTENs (rejects when the first connection fails). */
export async function listenChannel(url: string, channel: string, h: ListenHandlers): Promise<ChannelListener> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  let client: Client | null = null;
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let backoff = 500;

  const connect = async (): Promise<Client> => {
    const c = new Client({ connectionString: url, application_name: `vidq-listen-${channel}` });
    c.on('notification', (msg) => {
      if (msg.channel === channel) h.onNotice(msg.payload);
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
    h.onError?.(e);
    c.end().catch(() => {});
    const again = () => {
      retry = null;
      if (closed) return;
      connect().then(
        (fresh) => {
          if (closed) return void fresh.end().catch(() => {});
          client = fresh;
          backoff = 500;
          h.onReconnect?.();
        },
        (err: Error) => {
          h.onError?.(err);
          backoff = Math.min(backoff * 2, 10_000);
          retry = setTimeout(again, backoff);
        },
      );
    };
    retry = setTimeout(again, backoff);
  };

  client = await connect();
  return {
    get client() {
      return client;
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}

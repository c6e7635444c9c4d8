/**
 * One kind of live source (push, RTSP, RTMP, HLS, MJPEG): which streams it takes, the ffmpeg input
 * options of one connection, and what the end of a connection means. A new kind of source is one
 * module implementing this and one line in the table of sources/index.ts.
 */

/** A pulled source's URL and the address its host was checked to (requests go there: DNS pinning). */
export interface CheckedSource {
  url: URL;
  address: string;
}

/** One connection of a pulled stream, as a source kind sees it. */
export interface Connection extends CheckedSource {
  /** The stream went live before (it has a stream time 0): a source that starts over is not new time. */
  wasLive: boolean;
  /** What the kind keeps between the connections of one stream (e.g. the RTSP transport that works). */
  memo: Record<string, unknown>;
}

export interface SourceKind {
  readonly name: 'push' | 'rtsp' | 'rtmp' | 'hls' | 'mjpeg';
  /** Whether a stream with this URL is of this kind (null: frames are pushed); asked in table order. */
  claims(source: CheckedSource | null): boolean | Promise<boolean>;
  /**
   * ffmpeg's options before `-i` for one connection; or `ended` with the reason when the source
   * has finished for good (the stream ends rather than connecting again).
   */
  prepare(c: Connection): Promise<{ args: string[] } | { ended: string }>;
  /**
   * A connection ended (`code` 0: ffmpeg reached the end of its input; `frames`: how many it gave).
   * The reason when the source has finished for good; null to reconnect.
   */
  finished(c: Connection, exit: { code: number | null; frames: number }): Promise<string | null>;
}

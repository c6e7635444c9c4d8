/**
 * The kinds of live source, in the order they are asked whether a stream is theirs. A new kind of
 * source is one module (see kind.ts) and one line here.
 */
import { hls } from './hls';
import type { CheckedSource, SourceKind } from './kind';
import { mjpeg } from './mjpeg';
import { push } from './push';
import { rtmp } from './rtmp';
import { rtsp } from './rtsp';

export const SOURCE_KINDS: readonly SourceKind[] = [push, rtsp, rtmp, mjpeg, hls];

/** The kind of a stream's source (null: pushed frames); undefined for a URL no kind takes. */
export async function sourceKindOf(source: CheckedSource | null): Promise<SourceKind | undefined> {
  for (const kind of SOURCE_KINDS) if (await kind.claims(source)) return kind;
  return undefined;
}

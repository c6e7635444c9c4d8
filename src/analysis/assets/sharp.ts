/**
 * sharp, imported only once its native library is in place: in the compiled executable libvips is
 * extracted and loaded by analysis/assets.ts first (a top-level import would fail at start-up).
 */
import { analysisAssets } from './extract';

export type Sharp = typeof import('sharp');

let loading: Promise<Sharp> | null = null;

export function loadSharp(assetsDir: string): Promise<Sharp> {
  if (!loading) {
    const attempt = (async () => {
      // The OCR group carries the native libraries (libvips among them).
      await analysisAssets(assetsDir, ['ocr']);
      return (await import('sharp')).default as unknown as Sharp;
    })();
    // A failed load is tried again on the next call.
    attempt.catch(() => {
      if (loading === attempt) loading = null;
    });
    loading = attempt;
  }
  return loading;
}

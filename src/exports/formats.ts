/**
 * Export formats of a video's analysis: WebVTT and SubRip subtitles from its transcript segments,
 * and the file name a download is offered under. Pure functions, no I/O.
 */

export interface Cue {
  start: number;
  end: number;
  text: string;
}

/** Cues in time order, each lasting at least a millisecond, text on non-empty lines. */
function clean(cues: Cue[]): Cue[] {
  return [...cues]
    .sort((a, b) => a.start - b.start || a.end - b.end)
    .map((c) => ({
      start: Math.max(0, c.start),
      end: Math.max(c.end, c.start + 0.001),
      text: c.text
        .replace(/\r\n?/g, '\n')
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .join('\n'),
    }))
    .filter((c) => c.text !== '');
}

/** 3725.5 → "01:02:05.500" (VTT) or "01:02:05,500" (SRT). */
export function timestamp(sec: number, sep: '.' | ','): string {
  const ms = Math.round(sec * 1000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${sep}${pad(ms % 1000, 3)}`;
}

/** WebVTT: text escaped (&, <, >), and no "-->" inside a cue (it would end the timing line's meaning). */
export function toVtt(cues: Cue[]): string {
  const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const body = clean(cues)
    .map((c, i) => `${i + 1}\n${timestamp(c.start, '.')} --> ${timestamp(c.end, '.')}\n${esc(c.text)}`)
    .join('\n\n');
  return `WEBVTT\n\n${body}${body ? '\n' : ''}`;
}

/** SubRip: numbered cues, comma milliseconds, CRLF-free; text kept as is (SRT has no escaping). */
export function toSrt(cues: Cue[]): string {
  return clean(cues)
    .map(
      (c, i) => `${i + 1}\n${timestamp(c.start, ',')} --> ${timestamp(c.end, ',')}\n${c.text.replace(/-->/g, '->')}\n`,
    )
    .join('\n');
}

/**
 * Content-Disposition for a download named after the video (a display name from outside: only
 * its base, ASCII fallback plus the UTF-8 form).
 */
export function attachment(fileName: string, ext: string): string {
  const base = (fileName.replace(/\.[A-Za-z0-9]{1,5}$/, '') || 'video') + ext;
  const ascii = base.replace(/[^\x20-\x7e]/g, '_').replace(/["\\;]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(base)}`;
}

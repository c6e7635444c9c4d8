/**
 * Text from outside (cues and on-screen text read out of media, a server's answers shown by the
 * CLI) made safe to store and to print: terminal control sequences (ESC[2J, the OSC 52 clipboard
 * write ESC]52;…BEL) and control characters, bidi overrides included, are removed.
 */
import { stripVTControlCharacters } from 'node:util';

/** The index-name rule: control characters (C0, C1), lone surrogates and the bidi controls. */
export const UNSAFE_LABEL_CHARS = /[\p{Cc}\p{Cs}\u202A-\u202E\u2066-\u2069]/u;

/** Control characters besides tab and newline, and the bidi embedding/override/isolate controls. */
const CONTROLS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;

/**
 * Removes whole escape sequences first (Node's own parser of them: CSI, OSC up to BEL or ST), then
 * any control character left, keeping newlines and tabs (a CR of a CRLF becomes the newline).
 */
export function stripControls(text: string): string {
  return stripVTControlCharacters(text.replace(/\r\n?/g, '\n')).replace(CONTROLS, '');
}

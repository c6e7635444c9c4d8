/**
 * What a generator is told: a system prompt that keeps it to the evidence, and one user message
 * with the question, the guidance, the numbered evidence list (times written the way they must be
 * cited) and the composed answer as a draft. Frames of the cited spans go along for vision models.
 */
import type { Evidence } from '../evidence';
import { formatTime } from '../target';
import type { GenerateRequest } from './contracts';

export const SYSTEM_PROMPT = [
  'You answer questions about videos. You do not see the videos: you are given an evidence list of what automatic analysis found in them',
  '(objects detected in view, text read off the screen, words spoken, shots), each item with its video file and time span.',
  'Rules:',
  '1. Answer only from the evidence list. Do not add facts, names, numbers or events that are not in it.',
  '2. Cite times exactly as the evidence list writes them (m:ss or h:mm:ss), e.g. "at 0:42" or "from 1:05 to 1:20".',
  '   Never write a time, time code or duration that is not in the list, and never compute new ones.',
  '3. When the evidence comes from several videos, name the file.',
  '4. If the evidence does not answer the question, say that you could not find the answer in the indexed video. Do not guess.',
  '5. Follow the guidance on length, focus and language; without guidance answer in one to three sentences, in the language of the question.',
  '6. Write plain sentences: no markdown, no evidence numbers, no preamble.',
].join('\n');

const KIND_MEANING: Record<string, string> = {
  object: 'object detected in view',
  ocr: 'text on screen',
  transcript: 'words spoken',
  caption: 'caption',
  speech: 'someone speaks (not transcribed)',
  shot: 'shot',
  audio: 'sound',
};

/** At most this many evidence items are sent (best first), and this many frames to a vision model. */
export const MAX_EVIDENCE = 20;
export const MAX_IMAGES = 4;

export function spanText(start: number, end: number): string {
  const a = formatTime(start);
  const b = formatTime(end);
  return a === b ? a : `${a}–${b}`;
}

export interface PromptInput {
  prompt: string;
  guidance: string;
  evidence: Evidence[];
  /** The extractive answer from the same evidence. */
  draft: string;
  /** The moment or range the question is about, if any. */
  window: { start: number; end: number } | null;
  /** Frames to attach, each with the number of the evidence item it shows. */
  images?: { item: number; bytes: Uint8Array }[];
}

export function buildRequest(p: PromptInput): GenerateRequest {
  const items = p.evidence.slice(0, MAX_EVIDENCE);
  const files = new Set(items.map((e) => e.file_name));
  const lines = items.map((e, i) => {
    const text = e.text.replace(/\s+/g, ' ').trim();
    const shown = text.length > 300 ? `${text.slice(0, 300)}…` : text;
    return `[${i + 1}] ${spanText(e.start, e.end)} · ${KIND_MEANING[e.kind] ?? e.kind} · ${e.file_name} · "${shown}"`;
  });
  const parts = [`Question: ${p.prompt.trim()}`, `Guidance: ${p.guidance.trim() || '(none)'}`];
  if (p.window) parts.push(`The question is about ${spanText(p.window.start, p.window.end)} of the video.`);
  parts.push(`Evidence (${files.size > 1 ? `${files.size} videos, ` : ''}best first):\n${lines.join('\n')}`);
  parts.push(`Draft answer written by rules from the same evidence (correct, but may be clumsy): ${p.draft}`);
  if (p.images?.length)
    parts.push(`Attached images, in order: frames of evidence ${p.images.map((im) => `[${im.item}]`).join(', ')}.`);
  parts.push('Answer the question.');
  return {
    system: SYSTEM_PROMPT,
    messages: [{ role: 'user', content: parts.join('\n\n') }],
    images: p.images?.map((im) => im.bytes),
  };
}

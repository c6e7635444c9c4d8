/**
 * Speech-to-text on an OpenAI-compatible server: POST {base}/audio/transcriptions with the chunk as
 * a 16 kHz mono WAV file (multipart: file, model, response_format=verbose_json,
 * timestamp_granularities[]=segment), as OpenAI, speaches/faster-whisper-server, LocalAI, vLLM and
 * llama.cpp's whisper server accept. `verbose_json` segments keep their times; a plain `json`
 * reply ({text}) becomes one piece spanning the chunk.
 */
import type { EngineInfo } from '../../contracts';
import type { SpeechToText, TranscriptPiece } from '../stt';
import { SAMPLE_RATE } from '../vad';
import { ModelServerError, type ModelServerClient } from './client';

/** Chunks of joined speech spans: about a minute, well under every server's upload limit (16 kHz PCM: ~2 MB). */
export const OPENAI_STT_CHUNK_SEC = 60;

export class OpenAiSpeechToText implements SpeechToText {
  readonly info: EngineInfo;
  readonly transcribes = true;
  readonly weight = 1;
  readonly chunkSec: number = OPENAI_STT_CHUNK_SEC;
  readonly parallel = true;
  /** Chunks in flight at most (each holds its audio): twice the server limit, so decoding waits on a slow server. */
  get maxInFlight(): number {
    return this.client.concurrency * 2;
  }

  constructor(
    private readonly client: ModelServerClient,
    private readonly model: string,
  ) {
    this.info = { kind: 'stt', name: `openai:${model} via ${client.base}` };
  }

  async transcribe(audio: Float32Array, opts: { signal: AbortSignal; language?: string }): Promise<TranscriptPiece[]> {
    const wav = encodeWav(audio);
    const reply = await this.client.postForm(
      '/audio/transcriptions',
      () => {
        const form = new FormData();
        form.append('file', new Blob([wav], { type: 'audio/wav' }), 'speech.wav');
        form.append('model', this.model);
        form.append('response_format', 'verbose_json');
        form.append('timestamp_granularities[]', 'segment');
        if (opts.language) form.append('language', opts.language);
        return form;
      },
      opts.signal,
    );
    return transcriptionPieces(reply, audio.length / SAMPLE_RATE, this.client.base);
  }
}

/** The pieces of a verbose_json or json transcription reply, clamped to the chunk; a wrong shape is a ModelServerError. */
export function transcriptionPieces(reply: unknown, durationSec: number, from: string): TranscriptPiece[] {
  const r = reply as { text?: unknown; segments?: unknown } | null;
  const clamp = (x: number, lo: number) => Math.min(durationSec, Math.max(lo, x));
  if (Array.isArray(r?.segments)) {
    const pieces: TranscriptPiece[] = [];
    for (const s of r.segments as { start?: unknown; end?: unknown; text?: unknown; avg_logprob?: unknown }[]) {
      if (
        typeof s?.text !== 'string' ||
        typeof s.start !== 'number' ||
        typeof s.end !== 'number' ||
        !Number.isFinite(s.start) ||
        !Number.isFinite(s.end)
      )
        continue;
      const text = s.text.replace(/\s+/g, ' ').trim();
      if (!text) continue;
      const start = clamp(s.start, 0);
      pieces.push({
        start,
        end: clamp(s.end, start),
        text,
        ...(typeof s.avg_logprob === 'number' ? { confidence: Math.round(Math.exp(s.avg_logprob) * 1000) / 1000 } : {}),
      });
    }
    if (pieces.length || (r.segments as unknown[]).length === 0) return pieces;
  }
  if (typeof r?.text === 'string') {
    const text = r.text.replace(/\s+/g, ' ').trim();
    return text ? [{ start: 0, end: durationSec, text }] : [];
  }
  throw new ModelServerError(`a transcription reply with neither segments nor text from ${from}`);
}

/** 16-bit PCM mono WAV of 16 kHz float samples. */
export function encodeWav(samples: Float32Array): Uint8Array {
  const out = new Uint8Array(44 + samples.length * 2);
  const v = new DataView(out.buffer);
  const str = (at: number, s: string) => [...s].forEach((c, k) => v.setUint8(at + k, c.charCodeAt(0)));
  str(0, 'RIFF');
  v.setUint32(4, 36 + samples.length * 2, true);
  str(8, 'WAVE');
  str(12, 'fmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, 1, true); // mono
  v.setUint32(24, SAMPLE_RATE, true);
  v.setUint32(28, SAMPLE_RATE * 2, true);
  v.setUint16(32, 2, true);
  v.setUint16(34, 16, true);
  str(36, 'data');
  v.setUint32(40, samples.length * 2, true);
  for (let k = 0; k < samples.length; k++)
    v.setInt16(44 + k * 2, Math.max(-1, Math.min(1, samples[k]!)) * 0x7fff, true);
  return out;
}

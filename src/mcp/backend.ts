/**
 * What the MCP tools need from vidq, in the HTTP API's own shapes (GET /indexes, /index-resources,
 * /search, POST /inquire, …). Two implementations: in-process services for the server's /mcp
 * (local.ts), and HTTP calls to a running server for `vidq mcp` over stdio (remote.ts). The tools
 * (tools.ts) are written once against this interface, so both transports answer alike.
 *
 * Every method throws an error whose message is the HTTP API's message for the same refusal.
 */
import type { IndexView } from '../indexes/service';
import type { Evidence } from '../answering/evidence';
import type { SearchPage } from '../search/service';

/** A resource as GET /index-resources lists it (the fields the tools read). */
export interface ResourceRow {
  file_id: string;
  file_name: string;
  status: string;
  upload_time: string;
  progress: number;
  stage?: string;
  queue_position?: number;
  eta_sec?: number;
  error?: string;
  metadata: { duration?: number };
}

/** A person as GET /indexes/{index_id}/people lists them. */
export interface PersonRow {
  person_id: string;
  name: string | null;
  appearance_count: number;
  seconds: number;
  videos: string[];
  thumbnail_url: string;
}

/** POST /inquire's body, as the tools send it (index is always an index_id). */
export interface AskRequest {
  index: string;
  prompt: string;
  guidance?: string;
  target?: string;
  target_video?: string;
  /** Field name → description: asks /inquire for a JSON object with those keys as `output`. */
  json?: Record<string, string>;
}

/** POST /inquire's answer, with absolute `frame_url`s. */
export interface AskAnswer {
  output: string;
  evidence: Evidence[];
  model: string;
  credits_used: number;
}

export interface Cue {
  start: number;
  end: number;
  text: string;
}

/** What add_video hands back at once: the new resource and its index. */
export interface Added {
  file_id: string;
  index_id: string;
  file_name: string;
}

export interface Backend {
  /** `vidq mcp` over stdio reads files of the machine it runs on; the server's /mcp never does. */
  readonly localFiles: boolean;
  listIndexes(): Promise<IndexView[]>;
  /** The active index named by index_id or name; throws the API's 404 otherwise. */
  resolveIndex(ref: string): Promise<IndexView>;
  resources(indexId: string): Promise<ResourceRow[]>;
  search(req: {
    index: string;
    q: string;
    video?: string;
    kinds?: string;
    limit?: number;
    offset?: number;
  }): Promise<SearchPage>;
  ask(req: AskRequest, signal?: AbortSignal): Promise<AskAnswer>;
  /** Transcript cues in time order; throws the API's 404 when the video has none. */
  transcript(fileId: string): Promise<Cue[]>;
  people(indexId: string): Promise<PersonRow[]>;
  remove(indexId: string, fileId: string): Promise<void>;
  /** Admits the upload and returns its file_id; the fetch (or the file's upload) goes on behind. */
  addUrl(index: string, url: string, subtitlesUrl?: string): Promise<Added>;
  addFile(index: string, path: string): Promise<Added>;
  /** Why an upload this process started failed after add_video returned (its row is gone then). */
  uploadFailure(fileId: string): string | undefined;
  /** The JPEG bytes behind a frame_url this backend handed out; null when it cannot be read. */
  frame(url: string): Promise<Uint8Array | null>;
}

/** Uploads that failed after add_video answered: their rows are deleted, so the reason is kept here. */
export class UploadFailures {
  private readonly failures = new Map<string, { owner: string; message: string }>();

  constructor(private readonly max = 1000) {}

  record(fileId: string, owner: string, message: string): void {
    this.failures.set(fileId, { owner, message });
    // Oldest first out: a Map iterates in insertion order.
    while (this.failures.size > this.max) this.failures.delete(this.failures.keys().next().value!);
  }

  get(fileId: string, owner: string): string | undefined {
    const f = this.failures.get(fileId);
    return f && f.owner === owner ? f.message : undefined;
  }
}

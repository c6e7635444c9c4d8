/**
 * The OpenAPI description: how this service fills the gaps the API specification leaves open.
 * Limits are the running server's own (its configuration), never a number written here.
 */
export const apiDescription = (limits: { maxBodyBytes: number }) =>
  `
A self-hosted video understanding service. Add videos by URL into named media indexes, then ask
questions about them. The wire format follows the Video Understanding Service specification 1.0.0;
the choices below fill its gaps (docs/API.md has the same list).

**Tokens.** 60 random URL-safe characters (tokens issued before as 64 characters keep working), stored only as SHA-256 hashes, compared in constant
time. Sent as the field \`token\` (JSON body of POST requests, query parameter of GET requests); an
\`Authorization: Bearer <token>\` header is accepted as an alternative everywhere (the field may
then be left out, on /inquire too). A missing, unknown or revoked token is 401. Tokens come from the CLI (\`vidq user create\`, \`vidq token create\`);
the first start creates a default user and prints its token once.

**Identifiers.** \`index_id\` is an opaque 64-character string (it meets /inquire's 60-character
minimum for \`index\`); \`name\` is a human label, unique among a user's live indexes.
\`file_id\` = \`key\` (upload response) = \`video_id\` = \`target_video\`: an opaque 32-character id.
Wherever a request names an index next to a token (\`index\` of /remote-upload, /inquire,
/index-resources, /does-group-exist; \`project_id\` of /remove-from-index) the index_id and the name
are both accepted, and /remote-upload creates the index when the name is new. The hosted API's
\`project_id\` (the token and the index name written together: /inquire, /inquire-stream, and
\`index\` of /api-pre-upload) replaces \`token\` and \`index\`. Another user's
index or video is reported as not found (404).

**Units.** Durations in seconds; \`fileSize\` as the hosted product writes it, megabytes with two
decimals and " MB" (\`"12.34 MB"\`), with the byte count in \`file_size_bytes\`; \`fps\` a
string in the upload response and a number in resource metadata. \`is_large\`: file larger than the
configured threshold (default 500 MiB). \`count\`: videos currently in the index; \`total_duration\`:
the sum of their durations.

**Resource status.** \`queued\`, \`downloading\`, \`processing\`, \`ready\`, \`failed\`; resources also
carry \`progress\` (0–100), \`stage\`, and on failure \`error\` (a sentence saying why).
A video waiting for an analysis worker has \`stage: "queued"\`, \`queue_position\` (1 = next) and
\`eta_sec\`. \`playback_src\` (when present) streams an H.264/AAC copy for videos whose codec not every
browser plays (HEVC, ProRes, …).

**src.** A URL of this service, \`/media/{file_id}?expires=…&sig=…\`: a signed link that expires
(default 24 h) and streams the stored file with HTTP Range support. \`/media/{file_id}\` also accepts
\`?token=\` or a Bearer header.

**Uploads.** POST /remote-upload downloads the file (http/https only, no credentials in the URL, at
most 5 redirects, size cap, connect and idle timeouts; loopback, private and link-local addresses are
refused with 403 unless the server runs with --allow-private-urls), fetches the optional
\`subtitles_url\` (a .vtt or .srt, same rules; its cues become transcript segments), probes it and, by default, streams server-sent events,
each \`data:\` a JSON object with a \`type\`: \`file_authorized\`, \`progress\` (\`percentage\`, \`stage\`),
\`metadata\`, a last \`progress\` (100), \`complete\`, or \`error\` (\`error\`, \`message\`); the stream closes
when the file is stored. A client whose Accept names \`application/json\` gets the spec's
\`{data: {type: "metadata", fps, duration, fileSize, key, percentage}}\` instead. Local files the
hosted SDK's way: POST /api-pre-upload gives a signed, expiring, single-use URL to PUT the file to;
GET /status?file_id= answers \`{status: [transfer, analysis]}\` (0–100 each). The same bytes uploaded twice into one index return the existing key.

**Questions.** POST /inquire validates token ≥ 60 and prompt ≥ 1 characters; the index may be an index_id or a
name, or come with the token in \`project_id\`. \`subindex\` (file ids) limits the videos considered;
\`json\` (an object, or one JSON-encoded) asks for structured output. \`target\`
accepts a number of seconds, or a string: seconds (\`75\`, \`75.5\`), \`mm:ss\`, \`hh:mm:ss(.mmm)\` and a range \`a-b\`. Each answered question
costs credits (default 1; the default user is unlimited); check and debit are one atomic step, and a
failed question is not charged. Insufficient credits: 400.

**Query parameters.** GET /indexes: \`user_id\`, \`include_deleted\` (\`true\`/\`false\`, default \`false\`),
optional \`token\` (must then belong to \`user_id\`, else 403). Without a token GET /indexes answers
only while the server listens on loopback (configurable), else 401. GET /index-resources: \`token\`,
\`index\`, optional \`user_id\` (must match the token's user, else 403). Listings are served from an
in-memory cache invalidated by every write to the index.

**Live streams.** A \`performance\` index (GET /create-index?type=performance) takes live streams:
POST /add-stream \`{token, index}\` answers \`{status: "success", stream_id}\` (an unknown or plain index
answers \`{error}\` with status 200, as the hosted API); POST /stream \`{base64_image, stream_id, time}\`
takes PNG frames about once a second, in any order, and answers \`{success: true}\` or
\`{success: false, action: "paused" | "stopped"}\`. With the additive \`url\` (RTSP, RTMP, HLS live
playlist, HTTP(S) MJPEG) the server pulls the frames itself, records short segments, and reconnects
with backoff; credentials in the URL are never shown or logged, private addresses are refused
unless allowed. Each stream writes to its own resource (\`file_type: video/x-live\`), whose
\`live\` object in /index-resources gives its status, went-live time, frames and seconds analysed
and frames dropped; its frames are analysed in windows (OCR, objects, captions) and become
searchable segments within seconds. Standing questions (POST /alerts) fire once per episode
through the signed webhook outbox (\`alert.fired\`) and GET /alerts/events (server-sent events).
A cited moment of a stream plays: GET /media/{file_id}/live-clip?start=S&end=E (stream seconds, at
most 120 s) answers an MP4 made from the recording segments that cover it, cut at \`start\` and
\`end\` (\`X-Clip-Start\` and \`X-Clip-End\` give the stream seconds it covers), or from a pushed
stream's frames; authorised as the other media links. A pulled source that ends for good (a
playlist with #EXT-X-ENDLIST) ends its stream: status \`ended\`, with the reason.

**Deleting indexes.** DELETE /indexes/{index_id} soft-deletes (hidden unless include_deleted=true;
uploads, questions and its files get 404); POST /indexes/{index_id}/restore undoes it. Deleted
indexes are purged with their files after a retention (default 7 days).

**Model servers and reanalysis.** With a captioner (\`--captioner openai\`) the index also holds
\`caption\` segments: a vision model's one- or two-sentence description of a shot (or of ~10 s of a
long one), searchable, cited in \`evidence\` (kind \`caption\`) and listed by
GET /videos/{file_id}/segments; \`--stt openai\` adds \`transcript\` segments from a transcription
server. A model server that fails never fails a video: \`metadata.analysis\` says why a kind was
skipped, and \`metadata.analysis.<kind>.producer\` which engine and model made each kind.
POST /videos/{file_id}/reanalyze (\`{"analyzers": ["captions"]}\`; default: the stages whose engine
changed or were skipped) runs only those stages again and answers 202; 409 while an analysis of the
video is under way, when nothing changed, or when analysis is off.

**Request bodies.** A JSON object sent as \`Content-Type: application/json\` (a body with any other
or no Content-Type is a 400 on every endpoint but POST /upload, which takes the file itself, before
the token is checked), at most
\`--max-body-bytes\` (${byteSize(limits.maxBodyBytes)} on this server; 413 above, before the body is read whole), nested at most 16
levels, without a \`"__proto__"\` key; anything else is a 400 saying which.

**Own files, search, exports, webhooks.** POST /upload takes the file as the body (or the \`file\`
part of a multipart form) with the same checks and answers as /remote-upload, under
\`--max-upload-bytes\`. GET /search returns ranked moments without composing an answer and is free
(\`credits_used: 0\`). GET /videos/{file_id}/transcript.vtt|.srt and insights.json export a video's
analysis. PUT /indexes/{index_id}/webhook sets where \`video.ready\`, \`video.failed\` and
\`video.removed\` are POSTed, signed \`X-Vidq-Signature: sha256=<HMAC-SHA256 of the body>\` with the
user's secret (shown once), retried for 24 h, at least once, in order per video. Download and
webhook hosts are resolved once, checked, and connected to at the checked address (DNS pinning).

**Errors.** Every error body is \`{error, message}\`: \`error\` is the HTTP status as an integer and
\`message\` names the field or the cause. 400 invalid request or insufficient credits, 401 missing or
unknown token, 403 another user's id or a forbidden URL, 404 unknown index or video, 413 too large,
415 not a media file / still image, 422 no video stream, unusable duration or a file cut short,
502 source unreachable or misbehaving, 507 not enough free disk space.

**People.** With the \`faces\` analyzer, faces tracked through a shot are appearances, grouped
into people per index (never across indexes or users); \`/indexes/{index_id}/people\` lists them,
and a person can be named, merged into another, or have an appearance split out. Another user's
index, a deleted index, or a person of another index is 404.

**MCP (AI assistants).** POST /mcp is a Model Context Protocol server (streamable HTTP, stateless,
JSON answers) with the tools list_indexes, list_videos, add_video, get_video_status,
search_moments, ask, get_transcript, describe_video, list_people and remove_video. It takes
\`Authorization: Bearer <token>\` (401 before any tool runs); a browser's \`Origin\` must be this
server's own (403). The tools apply this API's rules (ask and describe_video cost what /inquire
costs; search is free; one user never sees another's indexes) and fail with this API's messages.
\`vidq mcp\` serves the same tools over stdio as a client of this API.
`.trim();

/** 131072 → "128 KiB (131072 bytes)". */
export function byteSize(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && v % 1024 === 0 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} bytes` : `${v} ${units[u]} (${n} bytes)`;
}

/**
 * The row types the rest of the code may name (issue 33): outside src/storage/ nothing imports the
 * tables (schema.ts) or drizzle-orm, only these types and the repositories.
 */
export type {
  AlertKind,
  Frame,
  IndexType,
  Job,
  LiveAlert,
  LiveAlertEvent,
  LiveState,
  LiveStream,
  MediaIndex,
  Person,
  Segment,
  SegmentKind,
  UploadGrant,
  User,
  Video,
  WebhookEvent,
} from './schema';

/** The kinds of segment, as the schema's enum has them (the MCP tools list them). */
export { SEGMENT_KINDS } from './schema';

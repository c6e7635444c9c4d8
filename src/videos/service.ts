/**
 * A user's videos as the per-video endpoints read them: the timeline of GET /videos/{id}/segments
 * and the file a media request may read. Another user's video, or one in a deleted index, is "not
 * found" (the access check is the repository's activeVideo).
 */
import { notFound } from '../errors';
import type { Catalog } from '../storage/catalog';
import { activeVideo, activeVideoOf, timelineFrames, timelineSegments } from '../storage/repositories/videos';
import type { User, Video } from '../storage/rows';

export class VideoService {
  constructor(private readonly d: { catalog: Catalog }) {}

  /**
   * The user's video's segments and sampled frames, in time order, from `from` seconds on (segments
   * that end there or later); 404 when it is not theirs or not live.
   */
  async timeline(user: User, fileId: string, from = Number.NEGATIVE_INFINITY) {
    const video = await activeVideoOf(this.d.catalog, user.id, fileId);
    if (!video) throw notFound('no such video');
    return {
      video,
      segments: (await timelineSegments(this.d.catalog, video.id)).filter((g) => g.end >= from),
      frames: (await timelineFrames(this.d.catalog, video.id)).filter((f) => f.t >= from),
    };
  }

  /**
   * The video whose files a media request may read: any live one when the request carries a signed
   * link for its path (`userId` null), else only the user's own; 404 otherwise.
   */
  async readable(fileId: string, userId: string | null): Promise<Video> {
    const video = await activeVideo(this.d.catalog, fileId, userId);
    if (!video) throw notFound('no such file');
    return video;
  }
}

// Written by scripts/build.ts for the compiled executable, restored after the build. Do not commit.
import ffmpeg from "/work/firsthour/node_modules/@ffmpeg-installer/linux-x64/ffmpeg" with { type: 'file' };
import ffprobe from "/work/firsthour/node_modules/@ffprobe-installer/linux-x64/ffprobe" with { type: 'file' };
export const EMBEDDED_BINARIES: { ffmpeg: string; ffprobe: string } | null = { ffmpeg: ffmpeg as unknown as string, ffprobe: ffprobe as unknown as string };

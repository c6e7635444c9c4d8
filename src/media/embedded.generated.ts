// Replaced by scripts/build.ts while compiling the executable: there it imports the ffmpeg and
// ffprobe binaries with { type: 'file' } so they travel inside the executable.
export const EMBEDDED_BINARIES: { ffmpeg: string; ffprobe: string } | null = null;

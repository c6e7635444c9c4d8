// Written by scripts/build.ts for the compiled executable, restored after the build. Do not commit.
export const PREBUILT_PAGE_SCRIPT: string | null = null;

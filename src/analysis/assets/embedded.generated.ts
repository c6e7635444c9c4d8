// Replaced by scripts/build.ts while compiling the executable: there it imports the analysis models,
// wasm files and native libraries with { type: 'file' } so they travel inside the executable, and
// src/analysis/assets/extract.ts extracts them to DATA_DIR/assets on first use. `null` here: `bun src/main.ts`
// and the tests use the npm packages in node_modules.

/** One embedded file: where it goes inside its group's folder, and its build-time path and size. */
export interface EmbeddedAssetFile {
  rel: string;
  path: string;
  size: number;
  /** A shared library to load before the bindings that link against it: one of its symbols (dlopen binds one). */
  symbol?: string;
}

/** Files extracted together into DATA_DIR/assets/<name>-<hash>/ (hash: of their contents, at build time). */
export interface EmbeddedAssetGroup {
  hash: string;
  files: EmbeddedAssetFile[];
}

export type AssetGroupName = 'ocr' | 'objects' | 'vad' | 'embeddings' | 'native';

export const EMBEDDED_ASSETS: Partial<Record<AssetGroupName, EmbeddedAssetGroup>> | null = null;

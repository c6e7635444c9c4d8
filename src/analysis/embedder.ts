// Kept for src/answering and src/search, which other work is rewriting: remove once they import
// from './engines/embedder' directly.
export * from './engines/embedder';
